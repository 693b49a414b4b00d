"""Independent reference for all-MiniLM-L6-v2 embeddings: a from-scratch numpy BERT forward pass.

No torch, no sentence-transformers, no tokenizers library: the safetensors file is parsed by hand,
the WordPiece tokenizer is re-implemented from tokenizer.json's vocabulary (BERT basic tokenization:
clean text, CJK spacing, lowercase + strip accents, punctuation split; greedy longest-match
WordPiece), and the encoder follows the BERT paper / HF modeling_bert (post-LN, exact-erf GELU).
Pooling is sentence-transformers' for this model: mean over real tokens, then L2 normalization,
with inputs truncated to 256 word pieces.

usage: python minilm_numpy.py MODEL_DIR SENTENCES_JSON OUT_JSON
"""
import json
import math
import struct
import sys
import unicodedata

import numpy as np

MAX_SEQ = 256


def load_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        arr = np.frombuffer(data[start:end], dtype=dtypes[meta["dtype"]]).reshape(meta["shape"])
        out[name] = arr.astype(np.float64)
    return out


# ---- tokenizer -------------------------------------------------------------------------------

def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def basic_tokens(text):
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
            continue
        if ch in "\t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif is_cjk(cp):
            out.append(" " + ch + " ")
        else:
            out.append(ch)
    text = "".join(out).lower()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    tokens = []
    for word in text.split():
        cur = ""
        for ch in word:
            if is_punct(ch):
                if cur:
                    tokens.append(cur)
                    cur = ""
                tokens.append(ch)
            else:
                cur += ch
        if cur:
            tokens.append(cur)
    return tokens


def wordpiece(word, vocab, unk="[UNK]", max_chars=100):
    if len(word) > max_chars:
        return [unk]
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            sub = word[start:end] if start == 0 else "##" + word[start:end]
            if sub in vocab:
                found = sub
                break
            end -= 1
        if found is None:
            return [unk]
        pieces.append(found)
        start = end
    return pieces


def encode(text, vocab):
    ids = [vocab["[CLS]"]]
    for w in basic_tokens(text):
        ids.extend(vocab[p] for p in wordpiece(w, vocab))
    ids = ids[: MAX_SEQ - 1]
    ids.append(vocab["[SEP]"])
    return ids


# ---- model -----------------------------------------------------------------------------------

_erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def embed(ids, W, cfg):
    n = len(ids)
    h = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    d = h // heads
    eps = cfg["layer_norm_eps"]
    p = "embeddings."
    x = W[p + "word_embeddings.weight"][ids] + W[p + "position_embeddings.weight"][:n] + W[p + "token_type_embeddings.weight"][0]
    x = layer_norm(x, W[p + "LayerNorm.weight"], W[p + "LayerNorm.bias"], eps)
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        lin = lambda t, name: t @ W[p + name + ".weight"].T + W[p + name + ".bias"]
        q = lin(x, "attention.self.query").reshape(n, heads, d).transpose(1, 0, 2)
        k = lin(x, "attention.self.key").reshape(n, heads, d).transpose(1, 0, 2)
        v = lin(x, "attention.self.value").reshape(n, heads, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = (s / s.sum(-1, keepdims=True)) @ v
        a = a.transpose(1, 0, 2).reshape(n, h)
        x = layer_norm(lin(a, "attention.output.dense") + x, W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"], eps)
        f = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(lin(f, "output.dense") + x, W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"], eps)
    pooled = x.mean(0)
    return pooled / max(np.linalg.norm(pooled), 1e-12)


def main():
    model_dir, sentences_path, out_path = sys.argv[1:4]
    cfg = json.load(open(f"{model_dir}/config.json"))
    vocab = json.load(open(f"{model_dir}/tokenizer.json", encoding="utf-8"))["model"]["vocab"]
    W = load_safetensors(f"{model_dir}/model.safetensors")
    W = {k[5:] if k.startswith("bert.") else k: v for k, v in W.items()}
    sentences = json.load(open(sentences_path, encoding="utf-8"))
    out = []
    for s in sentences:
        ids = encode(s, vocab)
        out.append({"text": s, "tokenIds": ids, "embedding": embed(ids, W, cfg).astype(float).tolist()})
    json.dump(out, open(out_path, "w", encoding="utf-8"))


if __name__ == "__main__":
    main()
