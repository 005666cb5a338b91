#!/usr/bin/env bash
# Sets up a Debian 12 machine to develop and test vkdiff, from a fresh clone:
#
#     bash tools/setup.sh        (as root, or a user with sudo, from anywhere)
#
# 1. Debian packages: Vulkan loader + headers, lavapipe (CPU Vulkan driver), the
#    validation layer, SPIR-V/GLSL tools, fmt, pybind11, cmake, g++, xvfb.
# 2. .venv (python3 from PATH) with numpy<2, pytest, pillow, glfw, PyOpenGL.
# 3. kp==0.9.0 (Kompute's Python wheel), built once from the PyPI sdist with
#    tools/toolchain-kompute.cmake and cached in ~/.cache/vkdiff/wheels.
# 4. The native module vkdiff/runtime/_vkrt*.so, built with cmake against the
#    Kompute sources of that same sdist.
# 5. vkdiff itself, editable in .venv (pip install -e . if pyproject.toml
#    exists, else a .pth file naming this checkout).
#
# Idempotent: every step is skipped when its result is already there, so a
# second run takes a few seconds. Network: Debian's mirrors and PyPI only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/vkdiff"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
KP_VERSION=0.9.0
T0=$SECONDS

say() { printf '[setup %3ds] %s\n' "$((SECONDS - T0))" "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- 1. apt
APT_PACKAGES=(libvulkan-dev mesa-vulkan-drivers spirv-tools libfmt-dev pybind11-dev cmake g++
              vulkan-validationlayers vulkan-tools xvfb glslang-tools)
# Debian's own python3 needs these for `python3 -m venv` and for Python.h.
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

# ---------------------------------------------------------------- 2. venv
if ! "$PY" -c '' 2>/dev/null; then
    say "venv: creating .venv with $(python3 --version)"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
fi
DEPS='numpy<2 pytest hypothesis pillow glfw PyOpenGL'
if [ "$(cat "$VENV/.vkdiff-deps" 2>/dev/null)" != "$DEPS" ]; then
    say "venv: pip install $DEPS"
    "$PY" -m pip install -q --disable-pip-version-check $DEPS
    echo "$DEPS" > "$VENV/.vkdiff-deps"
else
    say "venv: Python packages present"
fi
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"

# ---------------------------------------------------------------- 3. kp
mkdir -p "$CACHE/wheels" "$CACHE/sdist"
SDIST="$CACHE/sdist/kp-$KP_VERSION.tar.gz"
if [ ! -f "$SDIST" ]; then
    say "kp: downloading the kp==$KP_VERSION sdist"
    "$PY" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
        -d "$CACHE/sdist" "kp==$KP_VERSION"
fi
if [ -d "$SITE/kp-$KP_VERSION.dist-info" ]; then
    say "kp: $KP_VERSION installed"
else
    PYTAG="$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
    WHEEL="$(ls "$CACHE/wheels"/kp-$KP_VERSION-$PYTAG-*.whl 2>/dev/null | head -n1 || true)"
    if [ -z "$WHEEL" ]; then
        say "kp: building the wheel from the sdist (about a minute)"
        CMAKE_TOOLCHAIN_FILE="$ROOT/tools/toolchain-kompute.cmake" VKDIFF_KP_PYTHON="$PY" \
            "$PY" -m pip wheel -q --disable-pip-version-check --no-deps -w "$CACHE/wheels" "$SDIST"
        WHEEL="$(ls "$CACHE/wheels"/kp-$KP_VERSION-$PYTAG-*.whl | head -n1)"
    fi
    say "kp: installing $(basename "$WHEEL")"
    "$PY" -m pip install -q --disable-pip-version-check --no-deps "$WHEEL"
fi

# ---------------------------------------------------------------- 4. native module
KSRC="$CACHE/src/kp-$KP_VERSION/src"
if [ ! -f "$KSRC/Algorithm.cpp" ]; then
    say "native: unpacking the Kompute sources"
    mkdir -p "$CACHE/src"
    tar -xzf "$SDIST" -C "$CACHE/src"
fi
NATIVE="$ROOT/vkdiff/runtime/native"
SO="$ROOT/vkdiff/runtime/_vkrt$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
newer_source="$(find "$NATIVE" -type f -newer "$SO" 2>/dev/null | head -n1 || true)"
if [ -f "$SO" ] && [ -z "$newer_source" ]; then
    say "native: $(basename "$SO") up to date"
else
    say "native: building $(basename "$SO")"
    configure() {
        cmake -S "$NATIVE" -B "$ROOT/build/vkrt" -DCMAKE_BUILD_TYPE=Release \
            -DKOMPUTE_SRC="$KSRC" -DPYTHON_EXECUTABLE="$PY" > "$ROOT/build/vkrt-configure.log" 2>&1
    }
    mkdir -p "$ROOT/build"
    if ! configure; then  # e.g. a stale cache from a checkout elsewhere
        rm -rf "$ROOT/build/vkrt"
        configure || { cat "$ROOT/build/vkrt-configure.log"; die "cmake configure failed"; }
    fi
    cmake --build "$ROOT/build/vkrt" -j"$(nproc)" > "$ROOT/build/vkrt-build.log" 2>&1 \
        || { tail -n 40 "$ROOT/build/vkrt-build.log"; die "native build failed (log: build/vkrt-build.log)"; }
    touch "$SO"
fi

# ---------------------------------------------------------------- 5. vkdiff
PTH="$SITE/vkdiff-checkout.pth"
if [ -f "$ROOT/pyproject.toml" ]; then
    STAMP="$(sha1sum "$ROOT/pyproject.toml" | cut -c1-40) $ROOT"
    if [ "$(cat "$VENV/.vkdiff-editable" 2>/dev/null)" != "$STAMP" ]; then
        say "vkdiff: pip install -e ."
        rm -f "$PTH"
        "$PY" -m pip install -q --disable-pip-version-check -e "$ROOT"
        echo "$STAMP" > "$VENV/.vkdiff-editable"
    else
        say "vkdiff: editable install up to date"
    fi
elif [ "$(cat "$PTH" 2>/dev/null)" != "$ROOT" ]; then
    say "vkdiff: no pyproject.toml; adding $ROOT to .venv via $(basename "$PTH")"
    echo "$ROOT" > "$PTH"
fi

# ---------------------------------------------------------------- check
DEVICES="$(cd "$ROOT/vkdiff/runtime" && "$PY" -c 'import _vkrt; print(", ".join(_vkrt.list_devices()) or "NONE")')" \
    || die "the native module does not import"
say "done: Vulkan devices: $DEVICES; activate with: source .venv/bin/activate"
