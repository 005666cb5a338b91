#!/usr/bin/env bash
# Sets up the machine (tools/setup.sh) and runs the whole test suite, then the whole suite again
# under the Khronos validation layer (synchronization validation on): any message the layer logs
# fails the test that caused it. Then the Taichi conformance ratchet (tools/conformance.py): every
# Taichi v1.7.4 test listed in tests/conformance/expected-pass.txt must pass (the kit lives in
# ../shared/taichi-conformance, beside the checkout; VKDIFF_SKIP_CONFORMANCE=1 skips it).
# Usage: bash tools/test.sh [extra pytest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash tools/setup.sh
PY="$ROOT/.venv/bin/python"
echo "== test suite"
"$PY" -m pytest tests -q "$@"
echo "== validation layer run (VKDIFF_VALIDATION=1)"
VKDIFF_VALIDATION=1 "$PY" -m pytest tests -q -p no:cacheprovider "$@"
if [ "${VKDIFF_SKIP_CONFORMANCE:-0}" = 1 ]; then
  echo "== Taichi conformance: skipped (VKDIFF_SKIP_CONFORMANCE=1)"
else
  echo "== Taichi conformance (tests/conformance/expected-pass.txt must pass)"
  "$PY" tools/conformance.py
fi
