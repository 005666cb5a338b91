#!/usr/bin/env bash
# Sets up a Debian 12 machine to develop and test vkdiff, from a fresh clone:
#
#     bash tools/setup.sh [--bench]     (as root, or a user with sudo, from anywhere)
#
# 1. Debian packages: Vulkan loader + headers, lavapipe (CPU Vulkan driver), the
#    validation layer, SPIR-V/GLSL tools, cmake, ninja, g++, xvfb.
# 1b. SwiftShader, the second CPU Vulkan driver (tools/test.sh runs the suite on it too): only
#    libvk_swiftshader.so and its ICD json, taken from Debian's chromium-common package
#    (`apt-get download`, no browser installed) into .drivers/swiftshader/ in the checkout
#    (gitignored). Use it with VK_ICD_FILENAMES=.drivers/swiftshader/vk_swiftshader_icd.json.
#    VKDIFF_SKIP_SWIFTSHADER=1 leaves it out.
# 2. .venv (python3 from PATH) with vkdiff installed editable: `pip install -e .[test]`
#    (the build backend compiles the native module vkdiff/runtime/_vkrt*.so into the
#    checkout, with Kompute's C++ sources from the kp==0.9.0 sdist, cached in
#    ~/.cache/vkdiff). The build runs without isolation so that re-runs rebuild
#    incrementally in build/<wheel tag>.
# 2b. torch (vkdiff's optional `torch` extra), for the PyTorch interop tests: the CPU build
#    when pip's find-links folder has one (190 MB wheel, ~45 s, 0.9 GB installed), else
#    `pip install torch` (on Linux x86_64 PyPI's CUDA build: ~90 s, 5.5 GB installed).
#    VKDIFF_SKIP_TORCH=1 leaves it out (those tests then skip).
# 2c. ray[tune] (the `ray` extra) for vkdiff.distributed's Ray backend; VKDIFF_SKIP_RAY=1 skips.
# 3. With --bench: kp==0.9.0 (Kompute's Python package, tools/bench.py's GLSL
#    reference) built from the sdist with tools/toolchain-kompute.cmake, cached in
#    ~/.cache/vkdiff/wheels.
#
# Idempotent: a second run with nothing changed takes a second or two. Network:
# Debian's mirrors and PyPI only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/vkdiff"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
PIP=("$PY" -m pip install -q --disable-pip-version-check)
BENCH=0
for arg in "$@"; do
    case "$arg" in
        --bench) BENCH=1 ;;
        *) echo "usage: bash tools/setup.sh [--bench]" >&2; exit 2 ;;
    esac
done
T0=$SECONDS

say() { printf '[setup %3ds] %s\n' "$((SECONDS - T0))" "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- 1. apt
APT_PACKAGES=(libvulkan-dev mesa-vulkan-drivers spirv-tools cmake ninja-build g++
              vulkan-validationlayers vulkan-tools xvfb glslang-tools)
# Debian's own python3 needs these for `python3 -m venv` and for Python.h.
[ "$BENCH" = 1 ] && APT_PACKAGES+=(libfmt-dev pybind11-dev)  # kp's own build uses them
if [ "$(python3 -c 'import sys; print(sys.base_prefix)')" = /usr ]; then
    APT_PACKAGES+=(python3-venv python3-dev)
fi
missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    say "apt: all ${#APT_PACKAGES[@]} packages present"
else
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || die "not root and no sudo: install ${missing[*]}"
        SUDO=sudo
    fi
    say "apt: installing ${missing[*]}"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ---------------------------------------------------------------- 1b. SwiftShader
SWS_DIR="$ROOT/.drivers/swiftshader"
SWS_ICD="$SWS_DIR/vk_swiftshader_icd.json"
if [ "${VKDIFF_SKIP_SWIFTSHADER:-0}" = 1 ]; then
    say "swiftshader: skipped (VKDIFF_SKIP_SWIFTSHADER=1)"
elif [ -f "$SWS_ICD" ] && [ -f "$SWS_DIR/libvk_swiftshader.so" ]; then
    say "swiftshader: $(cat "$SWS_DIR/VERSION" 2>/dev/null || echo present) in .drivers/swiftshader"
else
    say "swiftshader: apt-get download chromium-common (31 MB; only libvk_swiftshader.so and its ICD json are kept)"
    DL="$(mktemp -d)"
    chmod 755 "$DL"  # apt's _apt user reads the folder (else apt warns "unsandboxed")
    (cd "$DL" && apt-get download -q chromium-common) > "$DL/apt.log" 2>&1 || {
        # a machine whose apt lists were never fetched: fetch them once, then retry
        if [ "$(id -u)" = 0 ]; then apt-get update -q > /dev/null 2>&1 || true
        elif command -v sudo > /dev/null; then sudo apt-get update -q > /dev/null 2>&1 || true; fi
        (cd "$DL" && apt-get download -q chromium-common) > "$DL/apt.log" 2>&1
    } || { cat "$DL/apt.log" >&2; rm -rf "$DL"
           die "could not download Debian's chromium-common package (SwiftShader). Check the apt sources and the network, or set VKDIFF_SKIP_SWIFTSHADER=1 to set up without it (tools/test.sh then skips the SwiftShader stages)"; }
    DEB="$(ls "$DL"/chromium-common_*.deb)"
    mkdir -p "$DL/x"
    dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$DL/x" ./usr/lib/chromium/libvk_swiftshader.so \
        ./usr/lib/chromium/vk_swiftshader_icd.json \
        || { rm -rf "$DL"; die "$(basename "$DEB") has no usr/lib/chromium/libvk_swiftshader.so (has Debian's packaging changed?)"; }
    rm -rf "$SWS_DIR.new" && mkdir -p "$SWS_DIR.new"
    cp "$DL/x/usr/lib/chromium/libvk_swiftshader.so" "$SWS_DIR.new/"
    # the loader resolves a relative library_path against the json's own folder
    API="$(sed -n 's/.*"api_version": *"\([^"]*\)".*/\1/p' "$DL/x/usr/lib/chromium/vk_swiftshader_icd.json")"
    printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "./libvk_swiftshader.so", "api_version": "%s"}}\n' \
        "${API:-1.0.5}" > "$SWS_DIR.new/vk_swiftshader_icd.json"
    basename "$DEB" .deb > "$SWS_DIR.new/VERSION"
    rm -rf "$SWS_DIR" && mv "$SWS_DIR.new" "$SWS_DIR"
    rm -rf "$DL"
    say "swiftshader: $(cat "$SWS_DIR/VERSION") -> .drivers/swiftshader/ (VK_ICD_FILENAMES=$SWS_ICD)"
fi

# ---------------------------------------------------------------- 2. venv + vkdiff
if ! "$PY" -c '' 2>/dev/null; then
    say "venv: creating .venv with $(python3 --version)"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
fi
SO="$ROOT/vkdiff/runtime/_vkrt$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
STAMP="$(cat pyproject.toml tools/backend/*.py | sha1sum | cut -c1-40) $ROOT"
newer_source="$(find vkdiff/runtime/native -type f -newer "$SO" 2>/dev/null | head -n1 || true)"
if [ "$(cat "$VENV/.vkdiff-editable" 2>/dev/null)" = "$STAMP" ] && [ -f "$SO" ] && [ -z "$newer_source" ]; then
    say "vkdiff: editable install and $(basename "$SO") up to date"
else
    # the build backend's own requirements, so that the build runs in .venv (incremental)
    BUILD_REQS="$("$PY" -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))' 2>/dev/null \
                  || echo 'scikit-build-core>=0.10 pybind11>=2.10')"
    say "vkdiff: pip install $BUILD_REQS, then pip install -e .[test] (compiles the native module; a minute or two the first time)"
    # shellcheck disable=SC2086
    "${PIP[@]}" $BUILD_REQS
    "${PIP[@]}" --no-build-isolation -e ".[test]" > "$VENV/.vkdiff-build.log" 2>&1 \
        || { tail -n 40 "$VENV/.vkdiff-build.log"; die "pip install -e . failed (log: .venv/.vkdiff-build.log)"; }
    [ -f "$SO" ] || die "the build did not leave $(basename "$SO") in vkdiff/runtime/"
    touch "$SO"
    echo "$STAMP" > "$VENV/.vkdiff-editable"
fi

SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
PYTAG="$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"

# ---------------------------------------------------------------- 2b. torch (interop tests)
if [ "${VKDIFF_SKIP_TORCH:-0}" != 1 ] && ! ls -d "$SITE"/torch-*.dist-info > /dev/null 2>&1; then
    TORCH=torch
    FIND_LINKS="${PIP_FIND_LINKS:-$("$PY" -m pip config get global.find-links 2>/dev/null || true)}"
    for d in $FIND_LINKS; do
        w="$(ls "${d#file://}"/torch-*+cpu-"$PYTAG"-*linux*_"$(uname -m)".whl 2>/dev/null | sort -V | tail -n1 || true)"
        if [ -n "$w" ]; then TORCH="$w"; fi
    done
    say "torch: pip install $(basename "$TORCH") (the PyTorch interop tests; VKDIFF_SKIP_TORCH=1 skips)"
    "${PIP[@]}" "$TORCH"
fi

# ---------------------------------------------------------------- 2c. ray (vkdiff.distributed)
# vkdiff's `ray` extra (Ray 2.60 with Tune): Pool(backend='ray') and its tests, the Tune example.
# VKDIFF_SKIP_RAY=1 leaves it out (those tests then skip).
if [ "${VKDIFF_SKIP_RAY:-0}" != 1 ] && ! "$PY" -c 'import ray.tune' > /dev/null 2>&1; then
    say "ray: pip install -e .[ray] (ray[tune]==2.60.0: vkdiff.distributed's Ray backend; VKDIFF_SKIP_RAY=1 skips)"
    "${PIP[@]}" 'ray[tune]==2.60.0'
fi

# ---------------------------------------------------------------- 3. kp (--bench)
KP_VERSION=0.9.0
if [ "$BENCH" = 1 ] && [ ! -d "$SITE/kp-$KP_VERSION.dist-info" ]; then
    mkdir -p "$CACHE/wheels"
    WHEEL="$(ls "$CACHE/wheels"/kp-$KP_VERSION-$PYTAG-*.whl 2>/dev/null | head -n1 || true)"
    if [ -z "$WHEEL" ]; then
        say "kp: building the kp==$KP_VERSION wheel from its sdist (about a minute)"
        "$PY" "$ROOT/vkdiff/runtime/native/kompute_sources.py" > /dev/null  # the cached sdist
        CMAKE_TOOLCHAIN_FILE="$ROOT/tools/toolchain-kompute.cmake" VKDIFF_KP_PYTHON="$PY" \
            "$PY" -m pip wheel -q --disable-pip-version-check --no-deps -w "$CACHE/wheels" \
            "${VKDIFF_BUILD_CACHE:-$CACHE}/sdist/kp-$KP_VERSION.tar.gz"
        WHEEL="$(ls "$CACHE/wheels"/kp-$KP_VERSION-$PYTAG-*.whl | head -n1)"
    fi
    say "kp: installing $(basename "$WHEEL") (and numpy<2: kp 0.9.0 corrupts uploads under numpy 2)"
    "${PIP[@]}" "$WHEEL" 'numpy<2'
fi

# ---------------------------------------------------------------- check
DEVICES="$("$PY" -c 'from vkdiff.runtime import _vkrt; print(", ".join(_vkrt.list_devices()) or "NONE")')" \
    || die "the native module does not import (python -m vkdiff doctor says why)"
if [ -f "$SWS_ICD" ]; then
    SWS_DEVICES="$(VK_ICD_FILENAMES="$SWS_ICD" "$PY" -c 'from vkdiff.runtime import _vkrt; print(", ".join(_vkrt.list_devices()) or "NONE")' 2>&1 | tail -n1)"
    DEVICES="$DEVICES; with VK_ICD_FILENAMES=.drivers/swiftshader/vk_swiftshader_icd.json: $SWS_DEVICES"
fi
say "done: numpy $("$PY" -c 'import numpy; print(numpy.__version__)'); Vulkan devices: $DEVICES; activate with: source .venv/bin/activate"
