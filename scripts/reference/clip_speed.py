#!/usr/bin/env python3
"""PyTorch side of the CLIP speed and equality check (issue 15, target 3).
Not run in CI (needs torch and transformers).

`HARDNEG_BENCH_DIR=DIR cargo bench --features ssr --bench scoring` keeps the
ViT-B/32-shaped random checkpoint in DIR/vit-b-32 and, in DIR/clip-speed,
the inputs it timed (preprocessed pixels, padded token ids), candle's
embeddings of them and candle's forward-only rates. This script times
transformers' CLIPModel on the same weights and inputs, the same batch sizes
and threads, then prints both side by side with the largest per-component
difference between the unit-length embeddings.

    python3 scripts/reference/clip_speed.py DIR [--threads 2]
"""
import argparse
import json
import os
import statistics
import time

BATCHES = (1, 8, 32)
# (image reps, text reps) per batch size: a few seconds each on 2 cores.
REPS = {1: (7, 21), 8: (3, 9), 32: (3, 5)}


def median_rate(fn, batch, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return batch / statistics.median(times)


def projected(out):
    # transformers 4 returns the projected tensor, 5 an output object holding it.
    return out if hasattr(out, "norm") else out.pooler_output


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bench_dir")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()

    import torch
    from transformers import CLIPModel

    torch.set_num_threads(args.threads)
    inputs = os.path.join(args.bench_dir, "clip-speed")
    model = CLIPModel.from_pretrained(os.path.join(args.bench_dir, "vit-b-32"), local_files_only=True).eval()
    size = model.config.vision_config.image_size
    with open(os.path.join(inputs, "pixels.f32"), "rb") as f:
        pixels = torch.frombuffer(bytearray(f.read()), dtype=torch.float32).reshape(-1, 3, size, size)
    with open(os.path.join(inputs, "ids.json")) as f:
        ids = torch.tensor(json.load(f)["ids"], dtype=torch.long)
    with open(os.path.join(inputs, "candle.json")) as f:
        candle = json.load(f)

    rows = []
    with torch.no_grad():
        for b in BATCHES:
            ri, rt = REPS[b]
            img = median_rate(lambda: model.get_image_features(pixel_values=pixels[:b]), b, ri)
            txt = median_rate(lambda: model.get_text_features(input_ids=ids[:b]), b, rt)
            rows.append((b, img, txt))
        unit = lambda t: torch.nn.functional.normalize(projected(t), dim=-1)
        img_emb = unit(model.get_image_features(pixel_values=pixels))
        txt_emb = unit(model.get_text_features(input_ids=ids))
    img_diff = (img_emb - torch.tensor(candle["image_embeddings"])).abs().max().item()
    txt_diff = (txt_emb - torch.tensor(candle["text_embeddings"])).abs().max().item()

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; candle {candle['threads']} threads;"
          f" load average {os.getloadavg()[0]:.2f}")
    print("batch  torch img/s  candle img/s  ratio   torch txt/s  candle txt/s  ratio")
    for b, img, txt in rows:
        ci, ct = candle["images_per_s"][str(b)], candle["texts_per_s"][str(b)]
        print(f"{b:>5}  {img:11.2f}  {ci:12.2f}  {ci / img:5.2f}x  {txt:11.2f}  {ct:12.2f}  {ct / txt:5.2f}x")
    print(f"max |torch - candle| per component: images {img_diff:.2e}, texts {txt_diff:.2e} (target <= 1e-5)")


if __name__ == "__main__":
    main()
