"""A training checkpoint → the folder the embed server loads (crates/embed-server/src/model.rs:
config.json, tokenizer.json, model.safetensors, sentence_bert_config.json), written by
sentence-transformers itself so the same folder also loads there (modules.json, pooling, normalize).

    python export.py --base DIR --checkpoint DIR --out DIR
"""

import argparse
import json
import os
import shutil

from safetensors import safe_open


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(args.base, device="cpu")
    model.load_state_dict(torch.load(os.path.join(args.checkpoint, "model.pt"), map_location="cpu"))
    with open(os.path.join(args.checkpoint, "state.json")) as f:
        state = json.load(f)
    tmp = args.out + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save(tmp, safe_serialization=True)
    # The tokenizer is not trained: the base's files, byte for byte (what the server already reads).
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        shutil.copyfile(os.path.join(args.base, name), os.path.join(tmp, name))
    for name in ("README.md", "data_config.json"):  # the base model's card is not this model's
        if os.path.exists(os.path.join(tmp, name)):
            os.remove(os.path.join(tmp, name))

    # The server reads exactly these; their tensors must be the base's names, shapes and dtype.
    for name in ("config.json", "tokenizer.json", "model.safetensors", "sentence_bert_config.json"):
        assert os.path.exists(os.path.join(tmp, name)), name
    def tensors(path):
        with safe_open(path, "pt") as f:
            return {k: (tuple(f.get_slice(k).get_shape()), f.get_slice(k).get_dtype()) for k in f.keys()}
    base, new = tensors(os.path.join(args.base, "model.safetensors")), tensors(os.path.join(tmp, "model.safetensors"))
    base.pop("embeddings.position_ids", None)
    new.pop("embeddings.position_ids", None)
    assert base == new, f"tensors differ from the base: {sorted(set(base) ^ set(new))[:10]}"
    with open(os.path.join(tmp, "sentence_bert_config.json")) as f:
        assert json.load(f)["max_seq_length"] == 256

    with open(os.path.join(tmp, "training.json"), "w") as f:
        json.dump({"base": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0)", "step": state["step"],
                   "total_steps": state["total_steps"], "pairs": state["pairs"], "config": state["config"],
                   "train_seconds": round(state["seconds"])}, f, indent=1)
    shutil.rmtree(args.out, ignore_errors=True)
    os.rename(tmp, args.out)
    size = os.path.getsize(os.path.join(args.out, "model.safetensors"))
    print(f"exported step {state['step']} / {state['total_steps']} to {args.out} (model.safetensors {size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
