"""The embed server computes what sentence-transformers computes with the same folder: N texts (code
passages and questions from the mined dev split, and a few fixed ones) embedded both ways; every
pair of vectors must have cosine ≥ 0.999. Starts the server on the folder (--model-dir) on its own
port unless --url points at one already running it.

    python check.py --model DIR [--n 64] [--url http://127.0.0.1:PORT/v1] [--server BIN] [--data DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--n", type=int, default=64)
    p.add_argument("--url", default=None)
    p.add_argument("--port", type=int, default=8797)
    p.add_argument("--server", default=os.path.join(ROOT, "target", "embed-server", "edgerag-embed-server"))
    p.add_argument("--data", default=os.path.join(ROOT, "target", "train", "data"))
    args = p.parse_args()
    import numpy as np
    from sentence_transformers import SentenceTransformer

    texts = ["fn main() { println!(\"hello\"); }", "Parse a configuration file into a map of settings.",
             "x" * 3000, "Ünïcödé — 日本語のテキスト and emoji 🚀", "def f(a, b):\n    return a + b\n"]
    data = os.path.join(args.data, "dev.jsonl")
    if os.path.exists(data):
        with open(data, encoding="utf-8") as f:
            for i, line in enumerate(f):
                if len(texts) >= args.n:
                    break
                if i % 7 == 0:
                    r = json.loads(line)
                    texts.extend([r["query"], r["positive"]])
    texts = texts[: args.n]

    server = None
    url = args.url
    if not url:
        if not os.path.exists(args.server):
            sys.exit(f"no embed server at {args.server}: build it with scripts/embed-server.sh --build")
        url = f"http://127.0.0.1:{args.port}/v1"
        server = subprocess.Popen([args.server, "--addr", f"127.0.0.1:{args.port}", "--model-dir", args.model],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(240):
            try:
                with urllib.request.urlopen(url.rsplit("/v1", 1)[0] + "/health", timeout=2) as r:
                    if b'"ok"' in r.read():
                        break
            except OSError:
                pass
            if server.poll() is not None:
                sys.exit("embed server exited: " + server.stderr.read().decode()[-2000:])
            time.sleep(0.25)
    try:
        got = post(url + "/embeddings", {"model": "all-MiniLM-L6-v2", "input": texts})
        served = np.array([d["embedding"] for d in sorted(got["data"], key=lambda d: d["index"])], dtype=np.float64)
    finally:
        if server:
            server.terminate()
            server.wait(timeout=30)
    ref = SentenceTransformer(args.model, device="cpu").encode(texts, batch_size=16, normalize_embeddings=True).astype(np.float64)
    served /= np.linalg.norm(served, axis=1, keepdims=True)
    cos = np.sum(served * ref, axis=1)
    worst = int(np.argmin(cos))
    print(f"{len(texts)} texts: cosine min {cos.min():.6f} mean {cos.mean():.6f} (worst: text {worst}, {len(texts[worst])} chars)")
    if cos.min() < 0.999:
        sys.exit("FAIL: the embed server's vectors differ from sentence-transformers' (cosine < 0.999)")
    print("ok: every cosine ≥ 0.999")


if __name__ == "__main__":
    main()
