#!/usr/bin/env bash
# Sets up the machine (tools/setup.sh) and runs the whole test suite, then the whole suite again
# under the Khronos validation layer (synchronization validation on): any message the layer logs
# fails the test that caused it. Usage: bash tools/test.sh [extra pytest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash tools/setup.sh
PY="$ROOT/.venv/bin/python"
echo "== test suite"
"$PY" -m pytest tests -q "$@"
echo "== validation layer run (VKDIFF_VALIDATION=1)"
VKDIFF_VALIDATION=1 "$PY" -m pytest tests -q -p no:cacheprovider "$@"
