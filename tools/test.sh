#!/usr/bin/env bash
# Sets up the machine (tools/setup.sh), runs the compiler tier (tests/compiler) with no Vulkan
# driver visible (it must not need a device), then the whole test suite, then the whole suite again
# under the Khronos validation layer (synchronization validation on): any message the layer logs
# fails the test that caused it. Then the Taichi conformance ratchet (tools/conformance.py): every
# Taichi v1.7.4 test listed in tests/conformance/expected-pass.txt must pass, and then (the sparse
# check, with the project's plugin tests/conformance/vkdiff_sparse_ext.py: the kit alone skips
# every test that requires ti.extension.sparse) every one in expected-pass-sparse.txt (the kit
# lives in ../shared/taichi-conformance, beside the checkout; VKDIFF_SKIP_CONFORMANCE=1 skips it).
# Last, the packaging check (tools/check_wheel.sh): `pip wheel .` installed into fresh venvs with
# numpy 2 and numpy 1.26 runs a kernel and its gradient (VKDIFF_SKIP_PACKAGING=1 skips it).
# Usage: bash tools/test.sh [extra pytest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash tools/setup.sh
PY="$ROOT/.venv/bin/python"
echo "== compiler tier without a device (tests/compiler, VK_ICD_FILENAMES=/nonexistent: no Vulkan)"
VK_ICD_FILENAMES=/nonexistent "$PY" -m pytest tests/compiler -q -p no:cacheprovider "$@"
echo "== test suite"
"$PY" -m pytest tests -q "$@"
echo "== validation layer run (VKDIFF_VALIDATION=1)"
VKDIFF_VALIDATION=1 "$PY" -m pytest tests -q -p no:cacheprovider "$@"
if [ "${VKDIFF_SKIP_CONFORMANCE:-0}" = 1 ]; then
  echo "== Taichi conformance: skipped (VKDIFF_SKIP_CONFORMANCE=1)"
else
  echo "== Taichi conformance (tests/conformance/expected-pass.txt and expected-pass-sparse.txt must pass)"
  "$PY" tools/conformance.py
fi
if [ "${VKDIFF_SKIP_PACKAGING:-0}" = 1 ]; then
  echo "== packaging check: skipped (VKDIFF_SKIP_PACKAGING=1)"
else
  echo "== packaging check (tools/check_wheel.sh: the wheel in fresh venvs, numpy 2 and 1.26)"
  bash tools/check_wheel.sh
fi
