#!/usr/bin/env bash
# Sets up the machine (tools/setup.sh) and runs the whole test suite, then a representative part
# of it again under the Khronos validation layer (synchronization validation on), which must
# report nothing. Usage: bash tools/test.sh [extra pytest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash tools/setup.sh
PY="$ROOT/.venv/bin/python"
echo "== test suite"
"$PY" -m pytest tests -q "$@"
echo "== validation layer run (VKDIFF_VALIDATION=1)"
VKDIFF_VALIDATION=1 "$PY" -m pytest -q -p no:cacheprovider \
    tests/runtime tests/autodiff tests/test_atomics.py tests/test_kernels.py tests/test_validation.py "$@"
