"""Fine-tunes all-MiniLM-L6-v2 on the mined pairs (scripts/train/mine.mjs), CPU only, resumable.

Contrastive: MultipleNegativesRankingLoss (sentence-transformers) over (query, positive, hard
negative x K): every other passage of the batch is a negative too. Batches are drawn in a seeded
order per epoch, with no two pairs of one batch sharing a query or a target (a shared target would
be a false in-batch negative). A checkpoint (weights, optimizer, scheduler, position) is written
atomically every --save-every steps and at the end, so a run stopped anywhere resumes where it was
with the same order of batches (`train.sh` again, same arguments).

    python train.py --data DIR --base DIR --out DIR [--epochs 1] [--batch 32] [--negatives 1]
                    [--lr 3e-5] [--warmup 0.05] [--seed 13] [--save-every 100] [--max-steps N]
                    [--change-body 0.5] [--threads 1]
"""

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import sys
import time


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--negatives", type=int, default=1, help="hard negatives per pair in a batch")
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--warmup", type=float, default=0.05)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--scale", type=float, default=20.0, help="MNRL's similarity scale (1 / temperature)")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--save-every", type=int, default=100)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: all epochs)")
    p.add_argument("--max-seq", type=int, default=128,
                   help="word pieces per text in training (the server embeds up to 256; 128 halves the cost "
                        "and keeps a chunk's path, name, signature and first lines)")
    p.add_argument("--change-body", type=float, default=0.5,
                   help="share of change queries given as subject + body (the rest: subject only)")
    p.add_argument("--threads", type=int, default=1)
    return p.parse_args()


def log(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S"), msg, flush=True)


def load_pairs(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            rows.append(json.loads(line))
    return rows


# A doc comment's opening, at the start of a line: Python docstrings, /** */ blocks, ///, # comments.
COMMENT_MARK = re.compile(r'^\s*("""|\'\'\'|/\*\*|///|# )', re.M)


def check_no_comment_shortcut(rows, limit=0.2):
    """Refuses a corpus where a doc comment tells a doc pair's positive from its negatives.

    The positive is the function without its comment; were the negatives written with theirs,
    "has no comment" alone would pick the answer, and a model would learn that instead of the
    question. Returns the two shares (positives, negatives) with a comment opening."""
    doc = [r for r in rows if r["kind"] == "doc" and r["negatives"]]
    if not doc:
        return 0.0, 0.0
    pos = sum(bool(COMMENT_MARK.search(r["positive"])) for r in doc) / len(doc)
    neg = sum(sum(bool(COMMENT_MARK.search(n)) for n in r["negatives"]) / len(r["negatives"]) for r in doc) / len(doc)
    if abs(pos - neg) > limit:
        sys.exit(f"doc pairs: {pos:.1%} of positives and {neg:.1%} of negatives hold a comment opening; "
                 "a comment would tell them apart. Mine again (scripts/train/train.sh mine).")
    return pos, neg


def h(*parts):
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()


def epoch_batches(rows, epoch, args):
    """The batches of one epoch: a seeded order, packed so that a batch repeats no query or target
    (a pair that would is deferred to the next batch); the short tail is dropped."""
    from collections import deque

    def keys_of(r):
        target = (r["repo"], r["path"]) if r["kind"] == "change" else (r["repo"], r["id"])
        return {("q", r["query"].lower()), ("t",) + target}

    order = sorted(range(len(rows)), key=lambda i: h(args.seed, epoch, i))
    batches, deferred, it = [], deque(), iter(order)
    exhausted = False
    while True:
        batch, keys = [], set()
        for _ in range(len(deferred)):
            i = deferred.popleft()
            k = keys_of(rows[i])
            if len(batch) < args.batch and not (k & keys):
                batch.append(i)
                keys |= k
            else:
                deferred.append(i)
        while len(batch) < args.batch and not exhausted:
            i = next(it, None)
            if i is None:
                exhausted = True
                break
            k = keys_of(rows[i])
            if k & keys:
                deferred.append(i)
            else:
                batch.append(i)
                keys |= k
        if len(batch) < args.batch:
            return batches
        batches.append(batch)


def texts_of(rows, batch, epoch, args):
    anchors, positives, negatives = [], [], [[] for _ in range(args.negatives)]
    for i in batch:
        r = rows[i]
        rng = random.Random(h(args.seed, epoch, "row", i))
        q = r["query"]
        if r["kind"] == "change" and r.get("query_body") and rng.random() < args.change_body:
            q = q + "\n" + r["query_body"]
        anchors.append(q)
        positives.append(r["positive"])
        negs = list(r["negatives"])
        rng.shuffle(negs)
        for k in range(args.negatives):
            negatives[k].append(negs[k % len(negs)])
    return [anchors, positives] + negatives


def save_checkpoint(out, model, optimizer, scheduler, state):
    import torch

    ckpt = os.path.join(out, "checkpoint")
    tmp = ckpt + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    torch.save(model.state_dict(), os.path.join(tmp, "model.pt"))
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "torch_rng": torch.get_rng_state()}, os.path.join(tmp, "optim.pt"))
    with open(os.path.join(tmp, "state.json"), "w") as f:
        json.dump(state, f, indent=1)
    old = ckpt + ".old"
    shutil.rmtree(old, ignore_errors=True)
    if os.path.exists(ckpt):
        os.rename(ckpt, old)
    os.rename(tmp, ckpt)
    shutil.rmtree(old, ignore_errors=True)


def main():
    args = parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    from sentence_transformers import SentenceTransformer, losses
    from transformers import get_linear_schedule_with_warmup

    os.makedirs(args.out, exist_ok=True)
    rows = load_pairs(os.path.join(args.data, "train.jsonl"))
    rows = [r for r in rows if r["negatives"]]
    pos, neg = check_no_comment_shortcut(rows)
    log(f"doc pairs with a comment opening: positives {pos:.1%}, negatives {neg:.1%}")
    model = SentenceTransformer(args.base, device="cpu")
    model.max_seq_length = args.max_seq
    loss_fn = losses.MultipleNegativesRankingLoss(model, scale=args.scale)

    per_epoch = len(epoch_batches(rows, 0, args))
    total = per_epoch * args.epochs
    if args.max_steps:
        total = min(total, args.max_steps)
    no_decay = ("bias", "LayerNorm.weight", "LayerNorm.bias")
    params = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(params, lr=args.lr)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(total * args.warmup), total)

    config = {k: v for k, v in vars(args).items() if k not in ("out",)}
    state = {"step": 0, "epoch": 0, "batch_in_epoch": 0, "total_steps": total, "steps_per_epoch": per_epoch,
             "pairs": len(rows), "config": config, "loss_ema": None, "seconds": 0.0}
    ckpt = os.path.join(args.out, "checkpoint")
    if os.path.exists(os.path.join(ckpt, "state.json")):
        with open(os.path.join(ckpt, "state.json")) as f:
            saved = json.load(f)
        for key in ("seed", "batch", "negatives", "epochs", "lr", "data"):
            if saved["config"].get(key) != config.get(key):
                sys.exit(f"checkpoint in {ckpt} was made with {key}={saved['config'].get(key)!r}, not {config.get(key)!r}: "
                         "use another --out or the same arguments")
        model.load_state_dict(torch.load(os.path.join(ckpt, "model.pt"), map_location="cpu"))
        opt = torch.load(os.path.join(ckpt, "optim.pt"), map_location="cpu", weights_only=False)
        optimizer.load_state_dict(opt["optimizer"])
        scheduler.load_state_dict(opt["scheduler"])
        torch.set_rng_state(opt["torch_rng"])
        state.update({k: saved[k] for k in ("step", "epoch", "batch_in_epoch", "loss_ema", "seconds")})
        log(f"resumed at step {state['step']} / {total} (epoch {state['epoch']}, batch {state['batch_in_epoch']})")
    else:
        log(f"training from {args.base}: {len(rows)} pairs, {per_epoch} steps per epoch, {total} steps")

    model.train()
    t_last, steps_last = time.time(), state["step"]
    done = False
    while state["epoch"] < args.epochs and not done:
        batches = epoch_batches(rows, state["epoch"], args)
        while state["batch_in_epoch"] < len(batches):
            if state["step"] >= total:
                done = True
                break
            t0 = time.time()
            columns = texts_of(rows, batches[state["batch_in_epoch"]], state["epoch"], args)
            features = [model.tokenize(col) for col in columns]
            loss = loss_fn(features, None)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            state["step"] += 1
            state["batch_in_epoch"] += 1
            state["seconds"] += time.time() - t0
            v = float(loss.detach())
            state["loss_ema"] = v if state["loss_ema"] is None else 0.98 * state["loss_ema"] + 0.02 * v
            if state["step"] % 10 == 0 or state["step"] == total or state["step"] - steps_last >= 1 and state["step"] <= 5:
                now = time.time()
                rate = (state["step"] - steps_last) / max(1e-9, now - t_last)
                t_last, steps_last = now, state["step"]
                eta = (total - state["step"]) / max(rate, 1e-9)
                log(f"step {state['step']}/{total} epoch {state['epoch']} loss {v:.4f} ema {state['loss_ema']:.4f} "
                    f"lr {scheduler.get_last_lr()[0]:.2e} {rate:.4f} steps/s, eta {eta / 3600:.2f} h")
            if state["step"] % args.save_every == 0:
                save_checkpoint(args.out, model, optimizer, scheduler, state)
                log(f"checkpoint at step {state['step']}")
        else:
            state["epoch"] += 1
            state["batch_in_epoch"] = 0
    save_checkpoint(args.out, model, optimizer, scheduler, state)
    with open(os.path.join(args.out, "DONE" if state["step"] >= total else "STOPPED"), "w") as f:
        f.write(json.dumps({"step": state["step"], "total": total}) + "\n")
    log(f"finished at step {state['step']} / {total}; checkpoint in {ckpt}")


if __name__ == "__main__":
    main()
