"""Intrinsic evaluation on the corpus's dev split (repositories never trained on): for each mined
pair, the query ranks its positive against a pool of passages. Two pools:

- own: the pair's own hard negatives (siblings / BM25 near misses);
- repo: the pair's own passages and the positives of every other pair of the same repository and
  kind that has another target (another function; for change pairs, another file) — up to a few
  hundred passages, the closer analogue of searching one repository. Other pairs' negatives are
  left out of it: one may be this pair's own function with its doc comment, a false negative.

Passage vectors are cached per model under --cache (a re-run only computes the figures).

Prints MRR@10 and R@1 / R@5 per kind, pool and language for each model given.

    python evaluate.py --data DIR --base DIR [--model DIR ...] [--limit-per-repo 100] [--threads 1]
"""

import argparse
import collections
import hashlib
import json
import os
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--model", action="append", default=[], help="a model folder or a training checkpoint")
    p.add_argument("--split", default="dev")
    p.add_argument("--limit-per-repo", type=int, default=100)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", default=None, help="write the figures here too")
    p.add_argument("--cache", default=None, help="folder for cached vectors (default DATA/../eval-cache)")
    args = p.parse_args()
    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    from sentence_transformers import SentenceTransformer

    rows = [json.loads(l) for l in open(os.path.join(args.data, f"{args.split}.jsonl"), encoding="utf-8")]
    by_repo = collections.defaultdict(list)
    for r in rows:
        by_repo[(r["repo"], r["kind"])].append(r)
    picked = []
    for key in sorted(by_repo):
        group = sorted(by_repo[key], key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
        picked.extend(group[: args.limit_per_repo])

    models = [("base", args.base)] + [(m.rstrip("/").split("/")[-2] + "/" + m.rstrip("/").split("/")[-1], m) for m in args.model]
    results = {}
    for label, path in models:
        t0 = time.time()
        if os.path.exists(os.path.join(path, "model.pt")):
            model = SentenceTransformer(args.base, device="cpu")
            model.load_state_dict(torch.load(os.path.join(path, "model.pt"), map_location="cpu"))
        else:
            model = SentenceTransformer(path, device="cpu")
        model.eval()
        passages = sorted({t for r in picked for t in [r["positive"], *r["negatives"]]})
        index = {t: i for i, t in enumerate(passages)}
        cache_dir = args.cache or os.path.join(os.path.dirname(os.path.abspath(args.data)), "eval-cache")
        os.makedirs(cache_dir, exist_ok=True)
        key = hashlib.sha256(("\0".join(passages) + "\1" + "\0".join(r["query"] for r in picked)).encode()).hexdigest()[:16]
        stamp = os.path.getmtime(os.path.join(path, "model.pt" if os.path.exists(os.path.join(path, "model.pt")) else "model.safetensors"))
        cache = os.path.join(cache_dir, hashlib.sha256(f"{os.path.abspath(path)}:{stamp}:{key}".encode()).hexdigest()[:16] + ".npz")
        if os.path.exists(cache):
            z = np.load(cache)
            pv, qv = z["pv"], z["qv"]
        else:
            pv = model.encode(passages, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
            qv = model.encode([r["query"] for r in picked], batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
            np.savez(cache, pv=pv, qv=qv)
        positives = collections.defaultdict(list)
        target = lambda r: r.get("path") if r["kind"] == "change" else r["id"]
        for r in picked:
            positives[(r["repo"], r["kind"])].append((target(r), index[r["positive"]]))
        acc = collections.defaultdict(lambda: collections.defaultdict(list))
        for qi, r in enumerate(picked):
            pos = index[r["positive"]]
            for pool_name, pool in (("own", [pos] + [index[t] for t in r["negatives"]]),
                                    ("repo", sorted({pos, *(index[t] for t in r["negatives"]),
                                                     *(i for t, i in positives[(r["repo"], r["kind"])] if t != target(r))}))):
                scores = pv[pool] @ qv[qi]
                rank = 1 + int(np.sum(scores > scores[pool.index(pos)]))
                for key in (f"{r['kind']}/{pool_name}", f"{r['kind']}/{pool_name}/{r['language']}"):
                    acc[key]["rr"].append(1 / rank if rank <= 10 else 0.0)
                    acc[key]["r1"].append(rank <= 1)
                    acc[key]["r5"].append(rank <= 5)
        out = {}
        for key in sorted(acc):
            a = acc[key]
            out[key] = {"n": len(a["rr"]), "MRR@10": float(np.mean(a["rr"])), "R@1": float(np.mean(a["r1"])), "R@5": float(np.mean(a["r5"]))}
        results[label] = out
        print(f"# {label} ({path}): {len(picked)} queries, {len(passages)} passages, {time.time() - t0:.0f} s", flush=True)
    keys = sorted({k for v in results.values() for k in v}, key=lambda k: (k.count("/"), k))
    print("| pool | n | " + " | ".join(f"{l} MRR@10 / R@1 / R@5" for l, _ in models) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in models) + " |")
    for k in keys:
        n = next(v[k]["n"] for v in results.values() if k in v)
        cells = [" / ".join(f"{results[l][k][m]:.3f}" for m in ("MRR@10", "R@1", "R@5")) if k in results[l] else "" for l, _ in models]
        print(f"| {k} | {n} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
