"""Tests of the native runtime module vkdiff.runtime._vkrt alone (no compiler).

Shaders are GLSL compiled here with glslangValidator. With VKDIFF_VALIDATION=1
the whole module runs under the Khronos validation layer (synchronization
validation on) and every test must leave the layer's log empty; without it,
test_clean_under_validation re-runs this module that way in a subprocess.
"""
import functools
import glob
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from vkdiff.runtime import validation

VALIDATING = validation.maybe_enable()

from vkdiff.runtime import _vkrt  # noqa: E402  (after the layer is set up)

FEATURES = {"float32_atomic_add", "float32_atomic_minmax", "float64", "int64",
            "float64_atomic_add", "int64_atomics", "subgroup_basic", "subgroup_vote",
            "subgroup_arithmetic", "subgroup_ballot", "subgroup_shuffle",
            "float_controls_preserve32", "float_controls_preserve64", "unified_memory",
            "texel_reads"}
FLOAT_CONTROLS = {"float_controls_preserve32", "float_controls_preserve64"}
LIMITS = {"max_workgroup_count_x", "max_workgroup_size_x", "max_workgroup_invocations",
          "max_storage_buffer_range", "max_push_constants_size", "max_storage_buffers_per_stage",
          "max_shared_memory_size", "max_texel_buffer_elements",
          "max_storage_texel_buffers_per_stage", "max_workgroup_size_y", "max_workgroup_size_z",
          "max_bound_descriptor_sets", "max_memory_allocation_count", "max_memory_allocation_size",
          "min_subgroup_size", "max_subgroup_size"}


@functools.lru_cache(maxsize=None)
def glsl(source: str) -> bytes:
    """SPIR-V binary of a GLSL compute shader."""
    exe = shutil.which("glslangValidator")
    if exe is None:
        pytest.skip("glslangValidator not installed (apt-get install glslang-tools)")
    with tempfile.TemporaryDirectory() as tmp:
        spv = os.path.join(tmp, "shader.spv")
        out = subprocess.run([exe, "-V", "--target-env", "vulkan1.1", "--stdin", "-S", "comp",
                              "-o", spv], input=source.encode(), capture_output=True)
        assert out.returncode == 0, out.stdout.decode() + out.stderr.decode()
        with open(spv, "rb") as f:
            return f.read()


def new_device(**kw):
    validation.maybe_enable()  # what vkdiff's runtime does before each Device
    return _vkrt.Device(**kw)


@pytest.fixture(scope="module", params=["unified", "staged"])
def dev(request):
    """Each test runs on a device whose Buffers are one mapped device-local buffer (where the
    device has unified memory, as lavapipe has) and on one whose Buffers have a staging copy."""
    predates = not hasattr(_vkrt.Buffer, "allocated_bytes")  # a module built before unified memory
    d = new_device(disable=["unified_memory"] if request.param == "staged" and not predates else [])
    if request.param == "unified" and not d.features.get("unified_memory"):
        d.close()
        pytest.skip("this device has no unified memory (or _vkrt predates it: rebuild it)")
    yield d
    d.close()


# Tests that make the layer log on purpose (and check its messages themselves).
EXPECT_MESSAGES = {"test_layer_reports_missing_barrier", "test_layer_reports_disabled_feature"}


@pytest.fixture(autouse=True)
def layer_log(request):
    """Under validation: fail a test that makes the layer log anything."""
    validation.read_new_messages()
    yield
    if VALIDATING and request.node.name not in EXPECT_MESSAGES:
        messages = validation.read_new_messages()
        assert messages == [], "validation layer:\n" + "\n\n".join(messages)


def mapped(buf):
    """One mapped device-local buffer (unified memory): upload/download record nothing."""
    return getattr(buf, "mapped", False)  # (False: a module built before unified memory)


def u32(buf):
    return buf.host.view(np.uint32)


def run(dev, *steps):
    """Record steps ('up', buf) / ('down', buf) / ('bar',) / (algo, groups, push) and submit."""
    b = dev.batch()
    for s in steps:
        if s[0] == "up":
            b.upload(s[1])
        elif s[0] == "down":
            b.download(s[1])
        elif s[0] == "bar":
            b.barrier()
        else:
            b.dispatch(*s)
    b.submit()


ADD = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer A { uint a[]; };
layout(push_constant) uniform P { uint n; uint add; } pc;
void main() { uint i = gl_GlobalInvocationID.x; if (i < pc.n) a[i] += pc.add; }
"""
WRITE = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer A { uint a[]; };
void main() { a[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x * 7u; }
"""
READ = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) writeonly buffer B { uint b[]; };
void main() { b[gl_GlobalInvocationID.x] = a[gl_GlobalInvocationID.x] + 1u; }
"""


# ------------------------------------------------------------------ device
def test_list_devices(dev):
    names = _vkrt.list_devices()
    assert names and all(isinstance(n, str) for n in names)
    assert dev.name in names


def test_device_properties(dev):
    if set(dev.features) == FEATURES - FLOAT_CONTROLS:
        pytest.skip("vkdiff/runtime/_vkrt was built before it reported float controls: rebuild it")
    if "unified_memory" not in dev.features:
        pytest.skip("vkdiff/runtime/_vkrt was built before unified memory: rebuild it")
    if "texel_reads" not in dev.features:
        pytest.skip("vkdiff/runtime/_vkrt was built before texel reads: rebuild it")
    assert set(dev.features) == FEATURES
    assert all(isinstance(v, bool) for v in dev.features.values())
    assert set(dev.limits) == LIMITS
    assert dev.limits["max_workgroup_count_x"] >= 65535
    assert dev.limits["max_push_constants_size"] >= 128
    major, minor, _patch = map(int, dev.api_version.split("."))
    assert (major, minor) >= (1, 1)
    assert dev.subgroup_size >= 1
    assert isinstance(dev.driver_version, int) and isinstance(dev.vendor_id, int)
    assert dev.name in repr(dev)
    if dev.facts["driver_id"] == 13:  # VK_DRIVER_ID_MESA_LLVMPIPE: what Mesa 22.3's lavapipe offers
        on = {k for k, v in dev.features.items() if v}
        staged = set() if "unified_memory" in on else {"unified_memory"}  # the staged fixture
        assert on == (FEATURES & set(dev.features)) - {"float64_atomic_add"} - staged


def test_disable_features(dev):
    off = ["float32_atomic_add", "float64", "int64", "subgroup_vote"]
    if dev.features.get("unified_memory") is False:
        off.append("unified_memory")  # as `dev` has it
    d = new_device(disable=off)
    try:
        for k in set(dev.features) & FEATURES:
            expected = dev.features[k] and k not in off
            if k in ("float64_atomic_add", "int64_atomics", "float_controls_preserve64"):
                # need float64 / int64
                expected = False
            assert d.features[k] == expected, k
    finally:
        d.close()
    with pytest.raises(RuntimeError, match="unknown feature 'float128'"):
        _vkrt.Device(disable=["float128"])


def test_device_index_out_of_range():
    with pytest.raises(RuntimeError, match="out of range"):
        _vkrt.Device(index=len(_vkrt.list_devices()))


# ------------------------------------------------------------------ buffers
def test_buffer_round_trip(dev):
    buf = dev.buffer(1001)
    assert buf.nbytes == 1001
    h = buf.host
    assert h.dtype == np.uint8 and h.shape == (1001,) and not h.any()
    data = np.random.default_rng(0).integers(0, 256, 1001, dtype=np.uint8)
    h[:] = data
    run(dev, ("up", buf), ("bar",), ("down", buf))
    assert (buf.host == data).all()
    h[:] = 0
    run(dev, ("down", buf))
    if mapped(buf):  # the host's view is the device's memory: upload/download record nothing
        assert not buf.host.any()
    else:  # the device side kept the data
        assert (buf.host == data).all()


def test_new_buffer_is_zero_on_device(dev):
    buf = dev.buffer(4096)
    buf.host[:] = 0xAB
    run(dev, ("down", buf))
    assert (buf.host == 0xAB).all() if mapped(buf) else not buf.host.any()
    read = dev.algorithm([buf], glsl(ADD), 8)  # what the device sees: add 0 to word 0
    run(dev, (read, 1, struct.pack("<II", 1, 0)), ("bar",), ("down", buf))
    assert (buf.host == 0xAB).all() if mapped(buf) else not buf.host.any()


TEXEL = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer B { float b[]; };
layout(set = 0, binding = 2, rg32f) uniform readonly imageBuffer pairs;
layout(set = 0, binding = 3, r32i) uniform readonly iimageBuffer words;
layout(push_constant) uniform P { uint n; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) {
        vec2 p = imageLoad(pairs, int(i)).xy;
        b[i] = p.x * 10.0 + p.y + float(imageLoad(words, int(2u * i + 1u)).x & 255) + a[0];
    }
}
"""


def test_texel_views(dev):
    """algorithm(texels=[(buffer index, VkFormat)]): binding len(buffers) + j is a storage
    texel buffer view of that buffer's memory, here two views (rg32f, r32i) of the buffer that
    binding 0 also binds; they read what the host wrote, in either memory kind."""
    if not dev.features.get("texel_reads"):
        pytest.skip("no texel reads (a module built before them, or the device lacks them)")
    n = 1000
    a, b = dev.buffer(8 * n), dev.buffer(4 * n)
    x = np.random.default_rng(1).uniform(-4, 4, 2 * n).astype(np.float32)
    a.host.view(np.float32)[:] = x
    algo = dev.algorithm([a, b], glsl(TEXEL), 4, [(0, 103), (0, 99)])  # R32G32_SFLOAT, R32_SINT
    run(dev, ("up", a), ("bar",), (algo, (n + 63) // 64, struct.pack("<I", n)), ("bar",),
        ("down", b))
    words = x.view(np.int32)[1::2] & 255
    want = x[0::2] * np.float32(10) + x[1::2] + words.astype(np.float32) + x[0]
    np.testing.assert_allclose(b.host.view(np.float32), want, rtol=1e-6)
    with pytest.raises(RuntimeError, match="texel view of buffer 2"):
        dev.algorithm([a, b], glsl(TEXEL), 4, [(2, 103), (0, 99)])


def test_buffer_memory(dev):
    """A mapped Buffer holds one allocation of device memory, a staged one two (its staging
    copy): the memory per field halves on unified memory."""
    if not hasattr(_vkrt.Buffer, "allocated_bytes"):
        pytest.skip("vkdiff/runtime/_vkrt was built before unified memory: rebuild it")
    buf = dev.buffer(4 << 20)
    assert buf.mapped == dev.features["unified_memory"]
    assert buf.allocated_bytes >= 4 << 20
    assert buf.allocated_bytes < (4 << 20) * (1.1 if mapped(buf) else 2.2)
    b = dev.batch()
    b.upload(buf)
    b.barrier()
    b.download(buf)
    assert b.pending == (1 if mapped(buf) else 3)
    b.submit()


def test_host_view_is_zero_copy_and_keeps_buffer_alive(dev):
    buf = dev.buffer(64)
    a, b = buf.host, buf.host
    a[3] = 42
    assert b[3] == 42
    del buf
    import gc
    gc.collect()
    a[:] = 7  # still mapped: the array holds the Buffer
    assert (b == 7).all()


def test_zero_byte_buffer(dev):
    buf = dev.buffer(0)
    assert buf.nbytes == 0 and buf.host.shape == (0,)
    run(dev, ("up", buf), ("bar",), ("down", buf))


# ------------------------------------------------------------------ dispatch
def test_dispatch(dev):
    n = 1000
    buf = dev.buffer(4 * n)
    u32(buf)[:] = np.arange(n, dtype=np.uint32)
    add = dev.algorithm([buf], glsl(ADD), 8)
    b = dev.batch()
    b.upload(buf)
    b.barrier()
    b.dispatch(add, (n + 63) // 64, struct.pack("<II", n, 5))
    b.barrier()
    b.dispatch(add, (n + 63) // 64, bytearray(struct.pack("<II", n - 1, 10)))  # any buffer
    b.barrier()
    b.download(buf)
    assert b.pending == (5 if mapped(buf) else 7)  # a mapped buffer's upload/download: no command
    b.submit()
    assert b.pending == 0
    expected = np.arange(n, dtype=np.uint32) + 15
    expected[-1] -= 10
    assert (u32(buf) == expected).all()
    b.submit()  # nothing recorded: no-op


_CHAIN = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer A { uint a[]; };
layout(push_constant) uniform P { uint k; } pc;
void main() {
    uint i = gl_LocalInvocationID.x;
    a[pc.k * 64u + i] = a[(pc.k - 1u) * 64u + i] * 3u + pc.k;
}
"""


def _chain(dev, steps, width):
    """A buffer of steps + 1 rows (row 0 = 0..width-1) and the shader making row k from row k-1
    (dispatch k with push constant k): a chain where each dispatch depends on the one before."""
    buf = dev.buffer(4 * width * (steps + 1))
    rows = u32(buf).reshape(steps + 1, width)
    rows[0] = np.arange(width, dtype=np.uint32)
    return buf, rows, dev.algorithm([buf], glsl(_CHAIN), 4)


def _chain_expected(steps, width):
    expected = np.empty((steps + 1, width), np.uint32)
    expected[0] = np.arange(width, dtype=np.uint32)
    for k in range(1, steps + 1):
        expected[k] = expected[k - 1] * np.uint32(3) + np.uint32(k)
    return expected


def test_dependent_chain_of_2000_dispatches_in_one_batch(dev):
    steps, width = 2000, 64
    buf, rows, algo = _chain(dev, steps, width)
    b = dev.batch()
    b.upload(buf)
    for k in range(1, steps + 1):
        b.barrier()
        b.dispatch(algo, 1, struct.pack("<I", k))
    b.barrier()
    b.download(buf)
    b.submit()
    assert (rows == _chain_expected(steps, width)).all()


def test_submit_without_waiting(dev):
    """submit(wait=False) queues the commands and returns; at most two submissions stay in
    flight (a third submit waits for the oldest); wait() or submit() waits for all. A barrier
    at the start of the next submission orders it after the previous one."""
    if not hasattr(_vkrt.Batch, "wait"):
        pytest.skip("this checkout's native module predates Batch.wait: rebuild it (bash tools/setup.sh)")
    steps, width = 40, 64
    buf, rows, algo = _chain(dev, steps, width)
    b = dev.batch()
    b.upload(buf)
    seen = []
    for k in range(1, steps + 1):
        b.barrier()
        b.dispatch(algo, 1, struct.pack("<I", k))
        b.submit(wait=False)
        seen.append((b.pending, b.inflight))
    assert seen[0] == (0, 1) and all(s == (0, 2) for s in seen[1:])
    b.barrier()
    b.download(buf)
    b.submit(wait=False)
    b.wait()
    assert b.inflight == 0
    assert (rows == _chain_expected(steps, width)).all()
    b.barrier()
    b.dispatch(algo, 1, struct.pack("<I", 1))
    b.submit(wait=False)
    b.submit()  # nothing recorded: waits for what is in flight
    assert b.inflight == 0
    b.wait()  # nothing in flight: no-op


def test_kernel_without_buffers(dev):
    noop = """#version 450
    layout(local_size_x = 1) in;
    layout(push_constant) uniform P { uint x; } pc;
    void main() { }
    """
    algo = dev.algorithm([], glsl(noop), 4)
    run(dev, (algo, 1, struct.pack("<I", 1)))
    algo0 = dev.algorithm([], glsl("#version 450\nlayout(local_size_x=1) in;\nvoid main(){}\n"), 0)
    run(dev, (algo0, 3, b""), (algo0, 0, b""))


def test_readonly_writeonly_buffers(dev):
    a, b = dev.buffer(256), dev.buffer(256)
    w, r = dev.algorithm([a], glsl(WRITE), 0), dev.algorithm([a, b], glsl(READ), 0)
    run(dev, (w, 1, b""), ("bar",), (r, 1, b""), ("bar",), ("down", b))
    assert (u32(b) == np.arange(64, dtype=np.uint32) * 7 + 1).all()


# ------------------------------------------------------------------ optional features
def needs(dev, feature):
    if not dev.features[feature]:
        pytest.skip(f"{dev.name} does not offer {feature}")


def test_float32_atomic_add(dev):
    needs(dev, "float32_atomic_add")
    src = """#version 450
    #extension GL_EXT_shader_atomic_float : require
    layout(local_size_x = 64) in;
    layout(set = 0, binding = 0) buffer S { float total; float hist[4]; };
    layout(set = 0, binding = 1) readonly buffer X { float x[]; };
    void main() {
        uint i = gl_GlobalInvocationID.x;
        atomicAdd(total, x[i]);
        atomicAdd(hist[i % 4u], 1.0);
    }
    """
    n = 1024
    s, x = dev.buffer(20), dev.buffer(4 * n)
    xs = (np.arange(n) % 7 * 0.25).astype(np.float32)
    x.host.view(np.float32)[:] = xs
    algo = dev.algorithm([s, x], glsl(src), 0)
    run(dev, ("up", x), ("bar",), (algo, n // 64, b""), ("bar",), ("down", s))
    got = s.host.view(np.float32)
    assert got[0] == xs.sum()  # multiples of 1/4: exact in any order
    assert (got[1:] == n / 4).all()


def test_float32_atomic_minmax(dev):
    needs(dev, "float32_atomic_minmax")
    src = """#version 450
    #extension GL_EXT_shader_atomic_float2 : require
    layout(local_size_x = 64) in;
    layout(set = 0, binding = 0) buffer S { float mx; float mn; };
    layout(set = 0, binding = 1) readonly buffer X { float x[]; };
    void main() { uint i = gl_GlobalInvocationID.x; atomicMax(mx, x[i]); atomicMin(mn, x[i]); }
    """
    n = 512
    s, x = dev.buffer(8), dev.buffer(4 * n)
    xs = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    x.host.view(np.float32)[:] = xs
    s.host.view(np.float32)[:] = [-np.inf, np.inf]
    algo = dev.algorithm([s, x], glsl(src), 0)
    run(dev, ("up", x), ("up", s), ("bar",), (algo, n // 64, b""), ("bar",), ("down", s))
    assert list(s.host.view(np.float32)) == [xs.max(), xs.min()]


def test_float64(dev):
    needs(dev, "float64")
    src = """#version 450
    layout(local_size_x = 64) in;
    layout(set = 0, binding = 0) buffer D { double d[]; };
    void main() { uint i = gl_GlobalInvocationID.x; d[i] = d[i] * 3.0 + 1.0 / 1099511627776.0; }
    """
    n = 256
    buf = dev.buffer(8 * n)
    xs = np.linspace(-1, 1, n)
    buf.host.view(np.float64)[:] = xs
    algo = dev.algorithm([buf], glsl(src), 0)
    run(dev, ("up", buf), ("bar",), (algo, n // 64, b""), ("bar",), ("down", buf))
    got = buf.host.view(np.float64)
    np.testing.assert_allclose(got, xs * 3 + 2.0 ** -40, rtol=1e-15, atol=1e-300)
    assert got[n // 2 - 1] != np.float32(got[n // 2 - 1])  # more than float32 precision


def test_float64_atomic_add(dev):
    needs(dev, "float64_atomic_add")
    src = """#version 450
    #extension GL_EXT_shader_atomic_float : require
    layout(local_size_x = 64) in;
    layout(set = 0, binding = 0) buffer S { double total; };
    void main() { atomicAdd(total, 0.5lf); }
    """
    s = dev.buffer(8)
    algo = dev.algorithm([s], glsl(src), 0)
    run(dev, (algo, 4, b""), ("bar",), ("down", s))
    assert s.host.view(np.float64)[0] == 128.0


def test_int64_atomics(dev):
    needs(dev, "int64_atomics")
    src = """#version 450
    #extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
    #extension GL_EXT_shader_atomic_int64 : require
    layout(local_size_x = 64) in;
    layout(set = 0, binding = 0) buffer S { uint64_t total; int64_t low; };
    void main() { atomicAdd(total, uint64_t(1) << 33); atomicMin(low, -int64_t(gl_GlobalInvocationID.x) << 40); }
    """
    s = dev.buffer(16)
    algo = dev.algorithm([s], glsl(src), 0)
    run(dev, (algo, 4, b""), ("bar",), ("down", s))
    assert s.host.view(np.uint64)[0] == 256 << 33
    assert s.host.view(np.int64)[1] == -(255 << 40)


def test_subgroup_arithmetic(dev):
    needs(dev, "subgroup_arithmetic")
    src = """#version 450
    #extension GL_KHR_shader_subgroup_arithmetic : require
    layout(local_size_x = 64) in;
    layout(set = 0, binding = 0) buffer A { uint a[]; };
    void main() { a[gl_GlobalInvocationID.x] = subgroupAdd(1u); }
    """
    buf = dev.buffer(4 * 64)
    algo = dev.algorithm([buf], glsl(src), 0)
    run(dev, (algo, 1, b""), ("bar",), ("down", buf))
    assert (u32(buf) == dev.subgroup_size).all()


# ------------------------------------------------------------------ errors
def _needs(obj, name):
    if not hasattr(obj, name):
        pytest.skip(f"_vkrt predates {name}: rebuild it (bash tools/setup.sh)")


def test_fill_and_copy_commands(dev):
    """Batch.fill / Batch.copy record vkCmdFillBuffer / vkCmdCopyBuffer on the device buffer,
    ordered with dispatches by Batch.barrier (a transfer write, then a shader read)."""
    _needs(_vkrt.Batch, "fill")
    n = 256
    a, b = dev.buffer(4 * n), dev.buffer(4 * n)
    add = dev.algorithm([a], glsl(ADD), 8)
    batch = dev.batch()
    batch.fill(a, 0, 4 * n, 7)
    batch.barrier()
    batch.fill(a, 16, 8, 0xFFFFFFFF)       # a range inside: words 4 and 5
    batch.barrier()
    batch.dispatch(add, (n + 63) // 64, struct.pack("<II", n, 1))
    batch.barrier()
    batch.copy(a, b, 4, 0, 4 * (n - 1))     # b[i] = a[i + 1]
    batch.barrier()
    batch.download(a)
    batch.download(b)
    batch.submit()
    expected = np.full(n, 8, np.uint32)
    expected[4:6] = 0  # 0xFFFFFFFF + 1
    assert (u32(a) == expected).all()
    assert (u32(b)[:n - 1] == expected[1:]).all() and u32(b)[n - 1] == 0
    with pytest.raises(RuntimeError, match="multiples of 4"):
        batch.fill(a, 2, 4, 0)
    with pytest.raises(RuntimeError, match="multiples of 4"):
        batch.copy(a, b, 0, 0, 4 * n + 4)
    with pytest.raises(RuntimeError, match="overlap"):
        batch.copy(a, a, 0, 4, 8)
    assert batch.pending == 0


def test_algorithms_made_together(dev):
    """Device.algorithms makes several pipelines at once (threads, without the GIL); each works
    as one from Device.algorithm, and one bad item fails the call with nothing left made."""
    _needs(_vkrt.Device, "algorithms")
    n = 128
    bufs = [dev.buffer(4 * n) for _ in range(5)]
    algos = dev.algorithms([([buf], glsl(ADD), 8) for buf in bufs], threads=3)
    assert len(algos) == 5
    batch = dev.batch()
    for k, (buf, algo) in enumerate(zip(bufs, algos)):
        batch.dispatch(algo, (n + 63) // 64, struct.pack("<II", n, k + 1))
    batch.barrier()
    for buf in bufs:
        batch.download(buf)
    batch.submit()
    for k, buf in enumerate(bufs):
        assert (u32(buf) == k + 1).all()
    with pytest.raises(RuntimeError, match="SPIR-V"):
        dev.algorithms([([bufs[0]], glsl(ADD), 8), ([bufs[1]], b"not spir-v at all...", 0)])
    assert dev.algorithms([]) == []


def test_prewarm(dev):
    """Device.prewarm compiles shaders on a helper device's queue thread and returns at once;
    the pipelines then work as before, and closing a device with prewarms queued or running
    waits for none of them to finish (nor hangs)."""
    _needs(_vkrt.Device, "prewarm")
    n = 64
    buf = dev.buffer(4 * n)
    dev.prewarm([([buf], glsl(ADD), 8), ([buf, buf], glsl(READ), 0)])
    add = dev.algorithm([buf], glsl(ADD), 8)
    run(dev, (add, 1, struct.pack("<II", n, 3)), ("bar",), ("down", buf))
    assert (u32(buf) == 3).all()
    with pytest.raises(RuntimeError, match="SPIR-V"):
        dev.prewarm([([buf], b"not spir-v at all...", 0)])
    other = new_device()
    b2 = other.buffer(16)
    other.prewarm([([b2], glsl(ADD), 8), ([b2], glsl(WRITE), 0), ([b2, b2], glsl(READ), 0)])
    other.close()
    with pytest.raises(RuntimeError, match="closed"):
        other.prewarm([([b2], glsl(ADD), 8)])


def test_errors_are_runtime_errors(dev):
    buf = dev.buffer(64)
    add = dev.algorithm([buf], glsl(ADD), 8)
    b = dev.batch()
    with pytest.raises(RuntimeError, match="push constants are 4 bytes"):
        b.dispatch(add, 1, b"1234")
    with pytest.raises(RuntimeError, match="groups_x"):
        b.dispatch(add, dev.limits["max_workgroup_count_x"] + 1, bytes(8))
    with pytest.raises(RuntimeError, match="SPIR-V"):
        dev.algorithm([buf], b"not spir-v at all...", 0)
    with pytest.raises(RuntimeError, match="multiple of 4"):
        dev.algorithm([buf], glsl(ADD), 6)
    with pytest.raises(RuntimeError, match=">= 0"):
        dev.buffer(-1)
    assert b.pending == 0
    other = new_device()
    try:
        with pytest.raises(RuntimeError, match="another Device"):
            other.batch().upload(buf)
        with pytest.raises(RuntimeError, match="another Device"):
            other.algorithm([buf], glsl(ADD), 8)
    finally:
        other.close()


def test_close(dev):
    d = new_device()
    buf = d.buffer(16)
    algo = d.algorithm([buf], glsl(ADD), 8)
    b = d.batch()
    b.dispatch(algo, 1, bytes(8))  # recorded, never submitted
    host = buf.host
    d.close()
    d.close()  # twice is fine
    for call in (lambda: d.buffer(4), lambda: d.batch(), lambda: buf.host,
                 lambda: b.submit(), lambda: b.barrier(), lambda: d.algorithm([], glsl(ADD), 8)):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    del host, buf, algo, b  # objects outliving close() are destroyed harmlessly
    run(dev, ("bar",))  # other devices unaffected


def test_no_vulkan_driver_is_a_clear_error():
    env = dict(os.environ, VK_ICD_FILENAMES="/nonexistent.json", VK_DRIVER_FILES="/nonexistent.json")
    code = ("from vkdiff.runtime import _vkrt\n"
            "assert _vkrt.list_devices() == []\n"
            "try:\n    _vkrt.Device()\nexcept RuntimeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("no Vulkan device found: install a Vulkan driver")


def test_batches_submitted_from_threads(dev):
    import threading
    add = glsl(ADD)
    errors = []

    def work(seed):
        try:
            buf = dev.buffer(4 * 64)
            algo = dev.algorithm([buf], add, 8)
            b = dev.batch()
            for _ in range(20):
                for _ in range(50):
                    b.dispatch(algo, 1, struct.pack("<II", 64, seed))
                    b.barrier()
                b.download(buf)
                b.submit()  # releases the GIL: the threads' submits overlap
            assert (u32(buf) == 20 * 50 * seed).all()
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i + 1,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ------------------------------------------------------------------ cost
@pytest.mark.skipif(VALIDATING, reason="timing is meaningless under the validation layer")
def test_launch_overhead(dev):
    buf = dev.buffer(256)
    algo = dev.algorithm([buf], glsl(ADD), 8)
    push = struct.pack("<II", 0, 0)
    b = dev.batch()
    n = 10_000
    t0 = time.perf_counter()
    for _ in range(n):
        b.dispatch(algo, 1, push)
    t1 = time.perf_counter()
    b.submit()
    t2 = time.perf_counter()
    record_us, total_us = (t1 - t0) / n * 1e6, (t2 - t0) / n * 1e6
    print(f"\n{n} tiny dispatches: record {record_us:.2f} us + GPU {total_us - record_us:.2f} us"
          f" = {total_us:.2f} us per dispatch ({dev.name})")
    assert record_us < 15  # the module's own cost; the driver's is the rest
    assert total_us < 1000


# ------------------------------------------------------------------ validation
def layer_installed():
    dirs = os.environ.get("VK_LAYER_PATH", "").split(os.pathsep)
    for base in (os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":") + ["/etc"]:
        dirs.append(os.path.join(base, "vulkan", "explicit_layer.d"))
    return any(glob.glob(os.path.join(d, "VkLayer_khronos_validation.json")) for d in dirs if d)


@pytest.mark.skipif(not VALIDATING, reason="needs VKDIFF_VALIDATION=1")
def test_layer_reports_missing_barrier(dev):
    a, b = dev.buffer(256), dev.buffer(256)
    w, r = dev.algorithm([a], glsl(WRITE), 0), dev.algorithm([a, b], glsl(READ), 0)
    run(dev, (w, 1, b""), (r, 1, b""))  # r reads what w wrote: no barrier
    messages = validation.read_new_messages()
    assert any("SYNC-HAZARD-READ-AFTER-WRITE" in m for m in messages), messages
    run(dev, (w, 1, b""), ("bar",), (r, 1, b""))
    assert validation.read_new_messages() == []


@pytest.mark.skipif(not VALIDATING, reason="needs VKDIFF_VALIDATION=1")
def test_layer_reports_disabled_feature(dev):
    needs(dev, "float32_atomic_add")
    src = """#version 450
    #extension GL_EXT_shader_atomic_float : require
    layout(local_size_x = 64) in;
    layout(set = 0, binding = 0) buffer S { float total; };
    void main() { atomicAdd(total, 1.0); }
    """
    d = new_device(disable=["float32_atomic_add"])
    try:
        d.algorithm([d.buffer(4)], glsl(src), 0)
    finally:
        d.close()
    messages = validation.read_new_messages()
    assert any("shaderBufferFloat32AtomicAdd" in m for m in messages), messages


@pytest.mark.skipif(VALIDATING, reason="already running under validation")
def test_clean_under_validation(tmp_path):
    if not layer_installed():
        pytest.skip("Khronos validation layer not installed (apt-get install vulkan-validationlayers)")
    env = dict(os.environ, VKDIFF_VALIDATION="1", VKDIFF_VALIDATION_LOG=str(tmp_path / "vk.log"))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                          __file__], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    assert "test_layer_reports_missing_barrier" not in out.stdout  # ran, not skipped
