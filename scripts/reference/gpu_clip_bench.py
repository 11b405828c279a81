#!/usr/bin/env python3
"""hardneg's GPU scoring against transformers' CLIPModel on the same images,
captions, weights and card (scripts/gpu-bench.sh runs it; docs/performance.md).

    gpu_clip_bench.py DATA_DIR MODEL_DIR --out DIR [--runs hn-f32,hn-bf16] [--logs hn-f32=LOG,...]
        [--batch 256] [--workers 16] [--device cuda] [--no-torch]

Reads the demo dataset's scored instances from DATA_DIR (hardneg.sqlite: the
negative-image rule of src/studies/negatives.rs for a dataset without
studies, the demo's), hardneg's cached
embeddings and stored outcomes of each run in --runs, and its progress logs
(images/s end to end and model alone). Then, unless --no-torch, runs
transformers' CLIPModel in four settings: fp32 without TF32 (the reference),
fp32 with PyTorch's defaults, fp16 and bf16 autocast; for each, images/s end
to end (files through a DataLoader of --workers processes: PIL decoding,
torchvision's OpenAI transforms, to embeddings in host memory) and model
alone (preprocessed pixels already on the GPU), texts/s (end to end also
after the first batch, on both sides: its warm-up left out), the largest
per-component difference of the unit embeddings against the reference, and
the outcomes that differ from the reference's, with the largest reference
margin among them (a near-tie has a margin near 0). Writes summary.txt and
summary.json under --out and prints the summary.
"""
import argparse
import hashlib
import json
import os
import re
import sqlite3
import sys
import time

import numpy as np

# src/studies/negatives.rs without Step 3 (the bench's demo has no study): an
# image a study item carries, else src/store/negatives.rs's stand-in, a
# candidate known to match, else slot 0.
NEGATIVE_SQL = """COALESCE(
  (SELECT si.chosen_image FROM study_items si WHERE si.instance_id = i.id AND si.chosen_image IS NOT NULL
   ORDER BY si.study_id DESC LIMIT 1),
  (SELECT c.image FROM candidates c WHERE c.instance_id = i.id AND (c.known_match = 1 OR c.slot = 0)
   ORDER BY CASE WHEN c.known_match = 1 THEN 1 ELSE 0 END DESC, c.slot LIMIT 1))"""
FLAGS = ("ipos2t", "ineg2t", "tpos2i", "tneg2i")


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


class Data:
    def __init__(self, data_dir, dataset):
        self.dir = data_dir
        self.db = sqlite3.connect(f"file:{os.path.join(data_dir, 'hardneg.sqlite')}?mode=ro", uri=True)
        (self.dataset_id,) = self.db.execute("SELECT id FROM datasets WHERE name = ?", (dataset,)).fetchone()
        rows = self.db.execute(
            f"SELECT i.id, i.caption, i.negative_caption, i.positive_image, {NEGATIVE_SQL} FROM instances i "
            "WHERE i.dataset_id = ? ORDER BY i.id", (self.dataset_id,)).fetchall()
        self.instances = [r for r in rows if r[3] and r[4]]
        self.images = list(dict.fromkeys(h for r in self.instances for h in (r[3], r[4])))
        self.texts = list(dict.fromkeys(t for r in self.instances for t in (r[1], r[2])))

    def image_path(self, h):
        return os.path.join(self.dir, "images", "originals", h[:2], h)

    def cached(self, run, kind):
        rows = self.db.execute("SELECT content_hash, vector FROM embeddings WHERE model = ? AND kind = ?", (run, kind))
        return {h: np.frombuffer(v, dtype="<f4") for h, v in rows}

    def run_embeddings(self, run):
        imgs, txts = self.cached(run, "image"), self.cached(run, "text")
        if not imgs or not txts:
            return None
        return (np.stack([imgs[h] for h in self.images]), np.stack([txts[sha(t)] for t in self.texts]))

    def run_outcomes(self, run):
        rows = self.db.execute(
            "SELECT o.instance_id, o.ipos2t, o.ineg2t, o.tpos2i, o.tneg2i FROM model_outcomes o "
            "JOIN model_runs r ON r.id = o.run_id WHERE r.name = ? AND r.dataset_id = ?", (run, self.dataset_id))
        got = {r[0]: tuple(bool(x) for x in r[1:]) for r in rows}
        return np.array([got[r[0]] for r in self.instances]) if got else None

    def similarities(self, image_vecs, text_vecs):
        """Per instance (c0·i0, c1·i0, c0·i1, c1·i1), in f64 as hardneg's rank.rs."""
        img = {h: v.astype(np.float64) for h, v in zip(self.images, image_vecs)}
        txt = {t: v.astype(np.float64) for t, v in zip(self.texts, text_vecs)}
        return np.array([[txt[c0] @ img[i0], txt[c1] @ img[i0], txt[c0] @ img[i1], txt[c1] @ img[i1]]
                         for _, c0, c1, i0, i1 in self.instances])


def outcomes(sims):
    """Outcome::from_scores: strict >, ties fail; and each flag's margin."""
    s00, s10, s01, s11 = sims.T
    pairs = ((s00, s10), (s11, s01), (s00, s01), (s11, s10))
    return np.stack([a > b for a, b in pairs], 1), np.stack([np.abs(a - b) for a, b in pairs], 1)


def compare(name, out, ref_out, ref_margin, emb=None, ref_emb=None):
    row = {"setting": name}
    if emb is not None and ref_emb is not None:
        row["max_diff_images"] = float(np.abs(emb[0] - ref_emb[0]).max())
        row["max_diff_texts"] = float(np.abs(emb[1] - ref_emb[1]).max())
    if out is not None and ref_out is not None:
        differ = out != ref_out
        row["instances_differing"] = int(differ.any(1).sum())
        row["flags_differing"] = int(differ.sum())
        row["largest_ref_margin_of_a_difference"] = float(ref_margin[differ].max()) if differ.any() else None
    return row


def log_rates(path):
    """Rates from a `hardneg score` log's progress lines: the last line's
    (end to end and model alone, since the first batch started) and, from
    two lines or more, the rates after the first batch ("steady": its
    warm-up, the kernels' first load, left out). A line's elapsed time is
    what the run encoded (its count less those from the cache) over its rate."""
    lines = {}
    for line in open(path, errors="replace"):
        m = re.match(r"(image|text)s: (\d+)/(\d+) done, ([\d.]+) \w+/s(?: \(model alone ([\d.]+))?", line)
        if m:
            cached = re.search(r"; (\d+) from the cache", line)
            encoded = int(m.group(2)) - (int(cached.group(1)) if cached else 0)
            lines.setdefault(m.group(1), []).append(
                (encoded, float(m.group(4)), float(m.group(5)) if m.group(5) else None))
    rates = {}
    for kind, got in lines.items():
        done, e2e, model = got[-1]
        rates[kind] = {"end_to_end": e2e, "model_alone": model}
        if len(got) >= 2 and e2e > 0 and got[0][1] > 0:
            first = got[0]
            rates[kind]["end_to_end_steady"] = steady(first[0], first[0] / first[1], done, done / e2e)
            if model and first[2]:
                rates[kind]["model_alone_steady"] = steady(first[0], first[0] / first[2], done, done / model)
    return rates


def steady(n0, t0, n1, t1):
    """Items per second between two points of a run; None without a second batch."""
    return (n1 - n0) / (t1 - t0) if t1 > t0 and n1 > n0 else None


def torch_settings(data, model_dir, batch, workers, device):
    import torch
    from PIL import Image
    from tokenizers import Tokenizer
    from torchvision import transforms
    from transformers import CLIPModel

    model = CLIPModel.from_pretrained(model_dir, local_files_only=True).to(device).eval()
    cfg = model.config
    size = cfg.vision_config.image_size
    tf = transforms.Compose([
        transforms.Resize(size, interpolation=transforms.InterpolationMode.BICUBIC),
        transforms.CenterCrop(size),
        lambda im: im.convert("RGB"),
        transforms.ToTensor(),
        transforms.Normalize((0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)),
    ])

    class Files(torch.utils.data.Dataset):
        def __len__(self):
            return len(data.images)

        def __getitem__(self, i):
            with Image.open(data.image_path(data.images[i])) as im:
                return tf(im)

    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(cfg.text_config.max_position_embeddings)
    encoded = [e.ids for e in tok.encode_batch(data.texts)]

    def feats(out):
        return out if torch.is_tensor(out) else out.pooler_output

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    def unit(x):
        return torch.nn.functional.normalize(x.float(), dim=-1).cpu().numpy()

    pixels = None
    settings = [("transformers fp32, no TF32 (reference)", None, False),
                ("transformers fp32, PyTorch defaults", None, None),
                ("transformers fp16 autocast", torch.float16, None),
                ("transformers bf16 autocast", torch.bfloat16, None)]
    for name, dtype, tf32 in settings:
        # PyTorch's defaults: TF32 off for matmul, on for cuDNN convolutions.
        torch.backends.cuda.matmul.allow_tf32 = bool(tf32)
        torch.backends.cudnn.allow_tf32 = True if tf32 is None else tf32
        ctx = (lambda: torch.autocast(device.split(":")[0], dtype=dtype)) if dtype else torch.no_grad
        with torch.no_grad():
            # End to end: files -> embeddings in host memory.
            sync()
            t0 = time.perf_counter()
            loader = torch.utils.data.DataLoader(Files(), batch_size=batch, num_workers=workers,
                                                 pin_memory=device.startswith("cuda"))
            img, kept, first = [], [], None
            for x in loader:
                if pixels is None:
                    kept.append(x)
                with ctx():
                    img.append(unit(feats(model.get_image_features(pixel_values=x.to(device, non_blocking=True)))))
                if first is None:
                    # unit() copied to the host: the first batch is done.
                    first = (len(x), time.perf_counter())
            sync()
            end = time.perf_counter()
            e2e = len(data.images) / (end - t0)
            e2e_steady = steady(first[0], first[1], len(data.images), end)
            if pixels is None:
                pixels = torch.cat(kept).to(device)
            # Model alone: preprocessed pixels already on the device; one warm-up batch.
            with ctx():
                model.get_image_features(pixel_values=pixels[:batch])
            sync()
            t0 = time.perf_counter()
            img_model = []
            for i in range(0, len(pixels), batch):
                with ctx():
                    img_model.append(feats(model.get_image_features(pixel_values=pixels[i:i + batch])))
            sync()
            model_alone = len(pixels) / (time.perf_counter() - t0)
            t0 = time.perf_counter()
            txt = []
            for i in range(0, len(encoded), batch):
                ids = encoded[i:i + batch]
                width = max(map(len, ids))
                padded = torch.tensor([x + [0] * (width - len(x)) for x in ids], device=device)
                with ctx():
                    txt.append(unit(feats(model.get_text_features(input_ids=padded))))
            sync()
            texts_per_s = len(encoded) / (time.perf_counter() - t0)
        print(f"{name}: {e2e:.0f} images/s end to end ({e2e_steady or 0:.0f} after the first batch), "
              f"{model_alone:.0f} model alone, {texts_per_s:.0f} texts/s",
              flush=True)
        yield {"setting": name, "images_per_s_end_to_end": e2e, "images_per_s_end_to_end_steady": e2e_steady,
               "images_per_s_model_alone": model_alone, "texts_per_s": texts_per_s,
               "emb": (np.concatenate(img), np.concatenate(txt))}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("data_dir")
    p.add_argument("model_dir")
    p.add_argument("--out", required=True)
    p.add_argument("--dataset", default="demo")
    p.add_argument("--runs", default="hn-f32,hn-bf16")
    p.add_argument("--logs", default="", help="RUN=LOG,… hardneg score's stderr")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--workers", type=int, default=min(16, os.cpu_count() or 1))
    p.add_argument("--device", default="cuda")
    p.add_argument("--no-torch", action="store_true", help="compare hardneg's runs with the first one only")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    data = Data(args.data_dir, args.dataset)
    print(f"{len(data.instances)} instances, {len(data.images)} images, {len(data.texts)} captions", flush=True)
    runs = [r for r in args.runs.split(",") if r]
    logs = dict(kv.split("=", 1) for kv in args.logs.split(",") if kv)
    hn = {r: (data.run_embeddings(r), data.run_outcomes(r), log_rates(logs[r]) if r in logs else {}) for r in runs}
    if args.no_torch:
        write_summary(args, data, runs, hn, [], final=True)
        return
    torch_rows = []
    # The summary after each setting: a call cut short still brings back the settings done.
    for row in torch_settings(data, args.model_dir, args.batch, args.workers, args.device):
        torch_rows.append(row)
        write_summary(args, data, runs, hn, torch_rows, final=False)
    write_summary(args, data, runs, hn, torch_rows, final=True)


def write_summary(args, data, runs, hn, torch_rows, final):
    if torch_rows:
        ref_emb = torch_rows[0]["emb"]
        ref_name = torch_rows[0]["setting"]
    else:
        ref_emb = hn[runs[0]][0]
        ref_name = f"hardneg {runs[0]}"
    ref_out, ref_margin = outcomes(data.similarities(*ref_emb))
    rows = []
    for r in runs:
        emb, out, rates = hn[r]
        row = compare(f"hardneg {r}", out, ref_out, ref_margin, emb, ref_emb)
        for kind in ("image", "text"):
            for k, v in rates.get(kind, {}).items():
                row[f"{kind}s_per_s_{k}"] = v
        rows.append(row)
    for t in torch_rows:
        out, _ = outcomes(data.similarities(*t["emb"]))
        row = compare(t["setting"], out, ref_out, ref_margin, t["emb"], ref_emb)
        row.update({k: v for k, v in t.items() if k not in ("emb", "setting")})
        rows.append(row)
    summary = {"reference": ref_name, "instances": len(data.instances), "images": len(data.images),
               "texts": len(data.texts), "batch": args.batch, "rows": rows, "complete": final,
               "reference_margin_median": float(np.median(ref_margin))}
    lines = [f"reference: {ref_name}; {len(data.instances)} instances, {len(data.images)} images, "
             f"{len(data.texts)} captions, batch {args.batch}; median margin {np.median(ref_margin):.2e}"
             + ("" if final else " (so far: the torch settings not listed did not finish)")]
    for row in rows:
        lines.append(row["setting"] + ": " + ", ".join(
            f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items() if k != "setting"))
    text = "\n".join(lines)
    if final:
        print(text)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)

if __name__ == "__main__":
    sys.exit(main())
