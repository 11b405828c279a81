#!/usr/bin/env python3
"""Reference external scorer for hardneg (docs/scorer-protocol.md, version 1)
using open_clip. Not run in CI: it needs torch, open_clip and the weights.

    pip install open_clip_torch pillow
    hardneg score --name ViT-B-32-laion --dataset bivlc \\
        --external "python3 scripts/scorers/open_clip_scorer.py --model ViT-B-32 --pretrained laion2b_s34b_b79k"

--pretrained takes an open_clip tag (downloaded on first use into the
Hugging Face cache) or a local checkpoint file. --device auto|cpu|cuda.
"""
import argparse
import hashlib
import json
import os
import sys


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def fingerprint(model_name, pretrained):
    # A local checkpoint is named by its content; a tag by model and tag.
    if os.path.isfile(pretrained):
        h = hashlib.sha256()
        with open(pretrained, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return "sha256:" + h.hexdigest()
    return f"open_clip:{model_name}:{pretrained}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="ViT-B-32")
    p.add_argument("--pretrained", default="openai")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    args = p.parse_args()

    import open_clip
    import torch
    from PIL import Image

    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    log(f"loading {args.model} ({args.pretrained}) on {device}")
    model, _, preprocess = open_clip.create_model_and_transforms(args.model, pretrained=args.pretrained, device=device)
    model.eval()
    tokenizer = open_clip.get_tokenizer(args.model)

    hello = {
        "hardneg_scorer": 1,
        "model": f"{args.model}/{os.path.basename(args.pretrained)}",
        "fingerprint": fingerprint(args.model, args.pretrained),
        "preprocess": f"open_clip:{args.model}",
        "device": "cuda:0" if device == "cuda" else "cpu",
    }
    print(json.dumps(hello), flush=True)

    for line in sys.stdin:
        req = json.loads(line)
        try:
            out = {"id": req["id"], "image_embeddings": [], "text_embeddings": []}
            with torch.no_grad():
                if req.get("images"):
                    pixels = torch.stack([preprocess(Image.open(i["path"]).convert("RGB")) for i in req["images"]]).to(device)
                    out["image_embeddings"] = model.encode_image(pixels).float().cpu().tolist()
                if req.get("texts"):
                    tokens = tokenizer(req["texts"]).to(device)
                    out["text_embeddings"] = model.encode_text(tokens).float().cpu().tolist()
        except Exception as e:  # reported to hardneg, which stops the run
            out = {"id": req["id"], "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
