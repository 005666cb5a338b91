#!/usr/bin/env bash
# CI. Sets up the machine (tools/setup.sh: packages, .venv, SwiftShader in .drivers/swiftshader/),
# then, each stage timed (a summary at the end):
# 1. the compiler tier (tests/compiler) with no Vulkan driver visible (it must not need a device);
# 2. the whole test suite on lavapipe;
# 3. the whole suite again on lavapipe under the Khronos validation layer (synchronization
#    validation on; any message the layer logs fails the test that caused it), with the GPU
#    launch geometry (VKDIFF_GEOMETRY=gpu: one iteration per invocation, device-computed grids),
#    so the path a GPU takes is run on every commit; stage 2 ran the CPU-driver geometry;
# 4. the whole suite on SwiftShader (the second CPU driver: subgroup size 4, no f64/i64, no float
#    atomics, 256 invocations per workgroup). A failing test fails CI; tests marked
#    `requires('float64')` etc. skip there. Each test has a time limit (pytest-timeout), and a
#    test still running after a while has its threads' stacks printed;
# 5. the Taichi conformance ratchet (tools/conformance.py): every Taichi v1.7.4 test listed in
#    tests/conformance/expected-pass.txt must pass on lavapipe, and then (the sparse check, with
#    the project's plugin tests/conformance/vkdiff_sparse_ext.py: the kit alone skips every test
#    that requires ti.extension.sparse) every one in expected-pass-sparse.txt (the kit lives in
#    ../shared/taichi-conformance, beside the checkout; VKDIFF_SKIP_CONFORMANCE=1 skips it);
# 6. the conformance kit on SwiftShader, report only: its count is printed, nothing fails;
# 7. the packaging check (tools/check_wheel.sh): `pip wheel .` installed into fresh venvs with
#    numpy 2 and numpy 1.26 runs a kernel and its gradient (VKDIFF_SKIP_PACKAGING=1 skips it).
# VKDIFF_SKIP_SWIFTSHADER=1 leaves SwiftShader out (setup and stages 4 and 6).
# Usage: bash tools/test.sh [extra pytest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="$ROOT/.venv/bin/python"
SWS_ICD="$ROOT/.drivers/swiftshader/vk_swiftshader_icd.json"
SW_TEST_TIMEOUT=300    # s, one test on SwiftShader (pytest-timeout; ~20x the slowest test there)
SW_STACKS_AFTER=240    # s, then a test's thread stacks are printed (a hang in native code)
SW_SUITE_LIMIT=1500    # s, the whole SwiftShader stage (a native hang that no signal ends)

T_ALL=$SECONDS
STAGE="" T_STAGE=0
TIMES=()
begin() { STAGE="$1"; T_STAGE=$SECONDS; echo "== $1"; }
end() {
    TIMES+=("$(printf '%5d s  %s' $((SECONDS - T_STAGE)) "$STAGE")")
    printf '== %s: %d s\n' "$STAGE" $((SECONDS - T_STAGE))
    STAGE=""
}
summary() {
    local rc=$?
    [ -n "$STAGE" ] && TIMES+=("$(printf '%5d s  %s  (FAILED, exit %d)' $((SECONDS - T_STAGE)) "$STAGE" "$rc")")
    echo "== stage times"
    printf '%s\n' "${TIMES[@]}"
    printf '%5d s  in all\n' $((SECONDS - T_ALL))
}
trap summary EXIT

begin "set-up (tools/setup.sh)"
bash tools/setup.sh
end

begin "compiler tier without a device (tests/compiler, VK_ICD_FILENAMES=/nonexistent: no Vulkan)"
VK_ICD_FILENAMES=/nonexistent "$PY" -m pytest tests/compiler -q -p no:cacheprovider "$@"
end

begin "test suite on lavapipe"
"$PY" -m pytest tests -q "$@"
end

begin "test suite on lavapipe, validation layer (VKDIFF_VALIDATION=1) and GPU launch geometry (VKDIFF_GEOMETRY=gpu)"
VKDIFF_VALIDATION=1 VKDIFF_GEOMETRY=gpu "$PY" -m pytest tests -q -p no:cacheprovider "$@"
end

if [ "${VKDIFF_SKIP_SWIFTSHADER:-0}" = 1 ]; then
    echo "== test suite on SwiftShader: skipped (VKDIFF_SKIP_SWIFTSHADER=1)"
else
    begin "test suite on SwiftShader (VK_ICD_FILENAMES=.drivers/swiftshader/vk_swiftshader_icd.json)"
    [ -f "$SWS_ICD" ] || { echo "no $SWS_ICD: tools/setup.sh installs it" >&2; exit 1; }
    # one pytest process per test folder: SwiftShader (Chromium 156's) leaks a pthread TLS key
    # and a JIT memfd per VkDevice that compiled a pipeline, and aborts once a process has made
    # ~1,020 of them (PTHREAD_KEYS_MAX 1024; every test's ti.init makes one)
    sw_failed=()
    sw_deadline=$((SECONDS + SW_SUITE_LIMIT))
    for dir in tests/*/; do
        left=$((sw_deadline - SECONDS))
        [ "$left" -gt 0 ] || { echo "the SwiftShader stage ran past $SW_SUITE_LIMIT s" >&2; exit 124; }
        echo "-- SwiftShader: $dir"
        rc=0
        VK_ICD_FILENAMES="$SWS_ICD" timeout -k 30 "$left" "$PY" -m pytest "$dir" -q \
            -p no:cacheprovider --timeout "$SW_TEST_TIMEOUT" -o faulthandler_timeout="$SW_STACKS_AFTER" "$@" || rc=$?
        case "$rc" in
            0|5) ;;  # 5: nothing collected (e.g. a -k that selects nothing in this folder)
            124) echo "the SwiftShader stage ran past $SW_SUITE_LIMIT s (a hang in native code? the stacks above name the test)" >&2; exit 124 ;;
            *) sw_failed+=("$dir (exit $rc)") ;;
        esac
    done
    [ ${#sw_failed[@]} -eq 0 ] || { echo "SwiftShader: failures in ${sw_failed[*]}" >&2; exit 1; }
    end
fi

if [ "${VKDIFF_SKIP_CONFORMANCE:-0}" = 1 ]; then
    echo "== Taichi conformance: skipped (VKDIFF_SKIP_CONFORMANCE=1)"
else
    begin "Taichi conformance on lavapipe (tests/conformance/expected-pass.txt and expected-pass-sparse.txt must pass)"
    "$PY" tools/conformance.py
    end
    if [ "${VKDIFF_SKIP_SWIFTSHADER:-0}" != 1 ]; then
        begin "Taichi conformance on SwiftShader (report only; the lavapipe ratchet above is the gate)"
        "$PY" tools/conformance.py --driver swiftshader --report-only --no-sparse --file-timeout 300
        end
    fi
fi

if [ "${VKDIFF_SKIP_PACKAGING:-0}" = 1 ]; then
    echo "== packaging check: skipped (VKDIFF_SKIP_PACKAGING=1)"
else
    begin "packaging check (tools/check_wheel.sh: the wheel in fresh venvs, numpy 2 and 1.26)"
    bash tools/check_wheel.sh
    end
fi
