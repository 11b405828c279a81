#!/usr/bin/env python3
"""Reference text-only scorer for `hardneg audit --external` (docs/audit.md):
a causal language model's mean log-likelihood per token of each caption, so
the more fluent and plausible caption scores higher. Not run in CI: it needs
torch, transformers and the weights.

    pip install torch transformers
    hardneg audit bivlc --stage final --name gpt2 \\
        --external "python3 scripts/scorers/text_lm_scorer.py --model gpt2"

--model takes a Hugging Face model id (downloaded on first use into its
cache) or a local directory. --device auto|cpu|cuda.
"""
import argparse
import json
import sys


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="gpt2")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    args = p.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    log(f"loading {args.model} on {device}")
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model).to(device).eval()
    # The first token has no context; a beginning-of-text token gives it one.
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id

    def score(text):
        ids = tokenizer(text, return_tensors="pt").input_ids.to(device)
        if bos is not None:
            ids = torch.cat([torch.tensor([[bos]], device=device), ids], dim=1)
        with torch.no_grad():
            logits = model(ids).logits[0, :-1]
        logp = torch.log_softmax(logits.float(), dim=-1)
        token_logp = logp.gather(1, ids[0, 1:].unsqueeze(1)).squeeze(1)
        return float(token_logp.mean())

    print(json.dumps({"hardneg_scorer": 1, "model": args.model, "device": device}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req.get("want") != "text_scores":
                raise ValueError("this scorer only gives text scores (hardneg audit), not embeddings")
            answer = {"id": req["id"], "text_scores": [score(t) for t in req["texts"]]}
        except Exception as e:  # reported to hardneg, which stops and shows it
            answer = {"id": req["id"], "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
