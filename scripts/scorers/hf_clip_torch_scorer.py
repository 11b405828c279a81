#!/usr/bin/env python3
"""Cross-check scorer (protocol v1, docs/scorer-protocol.md): the same Hugging
Face CLIP directory that `hardneg score --model-dir` reads, run with PyTorch
and transformers' CLIPModel, OpenAI's torchvision preprocessing and the
checkpoint's tokenizer.json. Scoring a dataset with both and comparing the
cached embeddings checks hardneg's candle implementation; timing both compares
speed. Not run in CI (needs torch, torchvision, transformers, tokenizers, pillow).

    hardneg score --name torch-ref --dataset demo \\
        --external "python3 scripts/scorers/hf_clip_torch_scorer.py MODEL_DIR [--threads N]"
"""
import argparse
import hashlib
import json
import sys


def features(out):
    # transformers 4 returns the projected tensor, 5 an output object holding it.
    return (out if hasattr(out, "tolist") else out.pooler_output).tolist()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model_dir")
    p.add_argument("--threads", type=int, default=0)
    args = p.parse_args()

    import torch
    from PIL import Image
    from tokenizers import Tokenizer
    from torchvision import transforms
    from transformers import CLIPModel

    if args.threads:
        torch.set_num_threads(args.threads)
    model = CLIPModel.from_pretrained(args.model_dir, local_files_only=True).eval()
    cfg = model.config
    size = cfg.vision_config.image_size
    preprocess = transforms.Compose([
        transforms.Resize(size, interpolation=transforms.InterpolationMode.BICUBIC),
        transforms.CenterCrop(size),
        lambda im: im.convert("RGB"),
        transforms.ToTensor(),
        transforms.Normalize((0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)),
    ])
    tok = Tokenizer.from_file(f"{args.model_dir}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(cfg.text_config.max_position_embeddings)
    h = hashlib.sha256()
    with open(f"{args.model_dir}/model.safetensors", "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    print(json.dumps({"hardneg_scorer": 1, "model": "transformers CLIPModel", "fingerprint": h.hexdigest(),
                      "preprocess": "torchvision-openai", "device": "cpu"}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        out = {"id": req["id"], "image_embeddings": [], "text_embeddings": []}
        with torch.no_grad():
            if req["images"]:
                pixels = torch.stack([preprocess(Image.open(i["path"])) for i in req["images"]])
                out["image_embeddings"] = features(model.get_image_features(pixel_values=pixels))
            if req["texts"]:
                ids = [e.ids for e in tok.encode_batch(req["texts"])]
                longest = max(len(i) for i in ids)
                batch = torch.tensor([i + [0] * (longest - len(i)) for i in ids])
                out["text_embeddings"] = features(model.get_text_features(input_ids=batch))
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
