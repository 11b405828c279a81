#!/usr/bin/env python3
"""A seeded, randomly initialised CLIP checkpoint in the Hugging Face layout
that `hardneg score --model-dir` and transformers' CLIPModel both read
(config.json, model.safetensors, tokenizer.json), made offline: no hub.

    make_clip_checkpoint.py OUT_DIR --data-dir DATA [--seed 0] [--tiny] [--numpy]

The shapes are ViT-B/32's (transformers' CLIPConfig defaults), or a small
model with --tiny. The weights: transformers' own initialisation under
torch.manual_seed(SEED) (CLIPModel(config).save_pretrained); --numpy writes
normal(0, 0.02) weights with numpy alone, for machines without torch.
tokenizer.json is a WordLevel tokenizer (as the Rust tests build them,
src/scoring/testing.rs) over the words of the data dir's captions, with
CLIP's ids for start- and end-of-text (49406, 49407), so end-of-text
pooling is transformers' (first eos_token_id) and hardneg's alike.
"""
import argparse
import json
import os
import re
import sqlite3
import struct

BOS, EOS, VOCAB = 49406, 49407, 49408


def caption_words(data_dir):
    db = sqlite3.connect(f"file:{os.path.join(data_dir, 'hardneg.sqlite')}?mode=ro", uri=True)
    words = set()
    for caption, negative in db.execute("SELECT caption, negative_caption FROM instances"):
        for text in (caption, negative):
            words.update(w for w in re.split(r"\W+", text.lower()) if w)
    return sorted(words)


def tokenizer_json(words):
    vocab = {"<pad>": 0}
    for w in words:
        vocab[w] = len(vocab)
    vocab["<unk>"] = len(vocab)
    assert len(vocab) < BOS, "more caption words than CLIP's vocabulary holds"
    vocab["<|startoftext|>"] = BOS
    vocab["<|endoftext|>"] = EOS

    def special(name, i):
        return {"id": name, "ids": [i], "tokens": [name]}

    def template(seq):
        return [{"SpecialToken": {"id": "<|startoftext|>", "type_id": 0}}, {"Sequence": {"id": seq, "type_id": 0}},
                {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}]

    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {"type": "TemplateProcessing", "single": template("A"), "pair": template("B"),
                           "special_tokens": {"<|startoftext|>": special("<|startoftext|>", BOS),
                                              "<|endoftext|>": special("<|endoftext|>", EOS)}},
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
    }


def config_dict(tiny):
    text = {"vocab_size": VOCAB, "eos_token_id": EOS, "bos_token_id": BOS, "pad_token_id": 0,
            "max_position_embeddings": 77, "hidden_act": "quick_gelu"}
    vision = {"image_size": 224, "patch_size": 32, "hidden_act": "quick_gelu"}
    if tiny:
        text.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4)
        vision.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4)
    else:
        text.update(hidden_size=512, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=8)
        vision.update(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12)
    return {"architectures": ["CLIPModel"], "model_type": "clip", "projection_dim": 64 if tiny else 512,
            "logit_scale_init_value": 2.6592, "text_config": text, "vision_config": vision}


def with_torch(out, cfg, seed):
    import torch
    from transformers import CLIPConfig, CLIPModel

    torch.manual_seed(seed)
    config = CLIPConfig(text_config=cfg["text_config"], vision_config=cfg["vision_config"],
                        projection_dim=cfg["projection_dim"])
    model = CLIPModel(config).eval()
    model.save_pretrained(out, safe_serialization=True)


def tensors(cfg):
    """Every tensor of a CLIP checkpoint: (name, shape, kind)."""
    out = []
    for tower, c in (("text_model", cfg["text_config"]), ("vision_model", cfg["vision_config"])):
        h, inner = c["hidden_size"], c["intermediate_size"]
        for i in range(c["num_hidden_layers"]):
            p = f"{tower}.encoder.layers.{i}"
            for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                out += [(f"{p}.self_attn.{proj}.weight", (h, h), "w"), (f"{p}.self_attn.{proj}.bias", (h,), "0")]
            for ln in ("layer_norm1", "layer_norm2"):
                out += [(f"{p}.{ln}.weight", (h,), "1"), (f"{p}.{ln}.bias", (h,), "0")]
            out += [(f"{p}.mlp.fc1.weight", (inner, h), "w"), (f"{p}.mlp.fc1.bias", (inner,), "0"),
                    (f"{p}.mlp.fc2.weight", (h, inner), "w"), (f"{p}.mlp.fc2.bias", (h,), "0")]
    t, v = cfg["text_config"], cfg["vision_config"]
    grid = v["image_size"] // v["patch_size"]
    out += [("text_model.embeddings.token_embedding.weight", (t["vocab_size"], t["hidden_size"]), "w"),
            ("text_model.embeddings.position_embedding.weight", (t["max_position_embeddings"], t["hidden_size"]), "w"),
            ("text_model.final_layer_norm.weight", (t["hidden_size"],), "1"),
            ("text_model.final_layer_norm.bias", (t["hidden_size"],), "0"),
            ("vision_model.embeddings.class_embedding", (v["hidden_size"],), "w"),
            ("vision_model.embeddings.patch_embedding.weight",
             (v["hidden_size"], 3, v["patch_size"], v["patch_size"]), "w"),
            ("vision_model.embeddings.position_embedding.weight", (grid * grid + 1, v["hidden_size"]), "w"),
            ("vision_model.pre_layrnorm.weight", (v["hidden_size"],), "1"),
            ("vision_model.pre_layrnorm.bias", (v["hidden_size"],), "0"),
            ("vision_model.post_layernorm.weight", (v["hidden_size"],), "1"),
            ("vision_model.post_layernorm.bias", (v["hidden_size"],), "0"),
            ("visual_projection.weight", (cfg["projection_dim"], v["hidden_size"]), "w"),
            ("text_projection.weight", (cfg["projection_dim"], t["hidden_size"]), "w"),
            ("logit_scale", (), "s")]
    return out


def with_numpy(out, cfg, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    header, blobs, offset = {}, [], 0
    for name, shape, kind in tensors(cfg):
        if kind == "w":
            a = rng.normal(0.0, 0.02, shape)
        elif kind == "s":
            a = np.full(shape, cfg["logit_scale_init_value"])
        else:
            a = np.full(shape, 1.0 if kind == "1" else 0.0)
        b = a.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head)
        for b in blobs:
            f.write(b)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--data-dir", required=True, help="a hardneg data dir: the tokenizer's words are its captions'")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tiny", action="store_true")
    p.add_argument("--numpy", action="store_true", help="numpy weights, no torch")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cfg = config_dict(args.tiny)
    (with_numpy if args.numpy else with_torch)(args.out, cfg, args.seed)
    with open(os.path.join(args.out, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(caption_words(args.data_dir)), f)
    print(f"wrote {args.out}: {'tiny' if args.tiny else 'ViT-B/32'}, seed {args.seed}, "
          f"{'numpy' if args.numpy else 'transformers'} init")


if __name__ == "__main__":
    main()
