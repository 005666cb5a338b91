"""`ti.Texture`, `ti.Format`, `ti.types.texture` / `rw_texture`: buffer-backed textures
(lang/texture.py, frontend/texture.py). The expected values are Taichi 1.7.4's, printed by the
same programs run with arch=ti.vulkan on lavapipe (/work/venvs/taichi)."""
import numpy as np
import pytest

import vkdiff as ti

# stored through rw_texture.store, read back with fetch: Taichi 1.7.4 on lavapipe
STORED = np.array([0.30000001192092896, 0.29999998211860657, 0.5 / 255, 1.5 / 255, 2.5 / 255,
                   76.5 / 255, 0.999, 1e-6, 0.001, 0.031, 0.3, -0.2, 65504.0, 70000.0, 1e-5, 0.1,
                   0.7, 0.123456], np.float32)
TAICHI_FETCHED = {
    'r8': [0.2980392277240753, 0.2980392277240753, 0.0, 0.007843137718737125,
           0.007843137718737125, 0.2980392277240753, 1.0, 0.0, 0.0, 0.0313725508749485,
           0.2980392277240753, 0.0, 1.0, 1.0, 0.0, 0.10196079313755035, 0.6980392336845398,
           0.12156863510608673],
    'r16': [0.2999923825263977, 0.2999923825263977, 0.0019531548023223877, 0.00588998245075345,
            0.009796291589736938, 0.2999923825263977, 0.998992919921875, 0.0,
            0.0010070954449474812, 0.031006332486867905, 0.2999923825263977, 0.0, 1.0, 1.0,
            1.5259021893143654e-05, 0.10000763088464737, 0.6999923586845398,
            0.12346074730157852],
    'r16f': [0.2998046875, 0.2998046875, 0.00196075439453125, 0.00588226318359375,
             0.00980377197265625, 0.2998046875, 0.99853515625, 9.5367431640625e-07,
             0.00099945068359375, 0.0309906005859375, 0.2998046875, -0.199951171875, 65504.0,
             65504.0, 9.953975677490234e-06, 0.0999755859375, 0.69970703125, 0.1234130859375],
}


@pytest.mark.parametrize('name', sorted(TAICHI_FETCHED))
def test_store_rounds_as_taichi(name):
    fmt = getattr(ti.Format, name)
    n = len(STORED)
    src = ti.ndarray(ti.f32, n)
    src.from_numpy(STORED)
    tex = ti.Texture(fmt, (n,))

    @ti.kernel
    def write(t: ti.types.rw_texture(num_dimensions=1, fmt=fmt, lod=0), s: ti.types.ndarray()):
        for i in s:
            t.store(ti.Vector([i]), ti.Vector([s[i], 0.0, 0.0, 0.0]))

    @ti.kernel
    def read(t: ti.types.texture(num_dimensions=1), o: ti.types.ndarray()):
        for i in o:
            o[i] = t.fetch(ti.Vector([i]), 0).x

    out = ti.ndarray(ti.f32, n)
    write(tex, src)
    read(tex, out)
    np.testing.assert_allclose(out.to_numpy(), TAICHI_FETCHED[name], rtol=2e-7, atol=0)
    # the host upload rounds the same way
    tex2 = ti.Texture(fmt, (n,))
    tex2.from_ndarray(src)
    read(tex2, out)
    np.testing.assert_allclose(out.to_numpy(), TAICHI_FETCHED[name], rtol=2e-7, atol=0)


UVS = np.array([[0, 0], [0.125, 0.1666667], [0.25, 0.5], [0.3, 0.7], [0.5, 0.5], [1, 1],
                [-0.3, 0.2], [1.4, 0.9], [0.99, 0.01], [0.4375, 0.25]], np.float32)
# a 4 x 3 texture, texel [i, j] = (0.1 i + 0.03 j + 0.001, -0.2 + 0.5 i, 1.7, 0.3333), sampled at
# UVS (Taichi 1.7.4, lavapipe): bilinear, texel centres at (i + 0.5) / n, coordinates wrapped
TAICHI_SAMPLED = {
    'rgba32f': [[0.1809999942779541, 0.5499999523162842, 1.7000000476837158, 0.3333],
                [0.001000003656372428, -0.20000000298023224, 1.7000000476837158, 0.3333],
                [0.08100000023841858, 0.04999999701976776, 1.7000000476837158, 0.3333],
                [0.11899999529123306, 0.15000002086162567, 1.7000000476837158, 0.3333],
                [0.1809999942779541, 0.550000011920929, 1.7000000476837158, 0.3333],
                [0.1809999942779541, 0.5499999523162842, 1.7000000476837158, 0.3333],
                [0.23399999737739563, 0.949999988079071, 1.7000000476837158, 0.3333],
                [0.1589999943971634, 0.34999996423721313, 1.7000000476837158, 0.3333],
                [0.19119998812675476, 0.6099998950958252, 1.7000000476837158, 0.3333],
                [0.13350000977516174, 0.42500001192092896, 1.7000000476837158, 0.3333]],
    'r32f': [[v, 0.0, 0.0, 1.0] for v in (0.181, 0.001, 0.081, 0.119, 0.181, 0.181, 0.234, 0.159,
                                          0.1912, 0.1335)],
    'rgba8': [[0.18431372940540314, 0.501960813999176, 1.0, 0.3333333432674408],
              [0.0, 0.0, 1.0, 0.3333333432674408],
              [0.08235294371843338, 0.14901961386203766, 1.0, 0.3333333432674408],
              [0.11764706671237946, 0.20784315466880798, 1.0, 0.3333333432674408],
              [0.18039216101169586, 0.5490196347236633, 1.0, 0.3333333432674408],
              [0.18431372940540314, 0.501960813999176, 1.0, 0.3333333432674408],
              [0.2352941334247589, 0.8588235974311829, 1.0, 0.3333333432674408],
              [0.16078431904315948, 0.3490196168422699, 1.0, 0.3333333432674408],
              [0.19215688109397888, 0.5372549295425415, 1.0, 0.3333333432674408],
              [0.13333334028720856, 0.4235294461250305, 1.0, 0.3333333432674408]],
    'rg16f': [[0.18089866638183594, 0.5499267578125, 0.0, 1.0],
              [0.0009994542924687266, -0.199951171875, 0.0, 1.0],
              [0.08098602294921875, 0.0499267578125, 0.0, 1.0],
              [0.1189422607421875, 0.14987795054912567, 0.0, 1.0],
              [0.18096923828125, 0.5498046875, 0.0, 1.0],
              [0.18089866638183594, 0.5499267578125, 0.0, 1.0],
              [0.2338867038488388, 0.9498046636581421, 0.0, 1.0],
              [0.1589086949825287, 0.3498046398162842, 0.0, 1.0],
              [0.19109100103378296, 0.6099169254302979, 0.0, 1.0],
              [0.133453369140625, 0.4248046875, 0.0, 1.0]],
}


@pytest.mark.parametrize('name', sorted(TAICHI_SAMPLED))
def test_sample_lod_as_taichi(name):
    fmt = getattr(ti.Format, name)
    tex = ti.Texture(fmt, (4, 3))

    @ti.kernel
    def write(t: ti.types.rw_texture(num_dimensions=2, fmt=fmt, lod=0)):
        for i, j in ti.ndrange(4, 3):
            t.store(ti.Vector([i, j]),
                    ti.Vector([0.1 * i + 0.03 * j + 0.001, -0.2 + 0.5 * i, 1.7, 0.3333]))

    @ti.kernel
    def sample(t: ti.types.texture(num_dimensions=2), uv: ti.types.ndarray(),
               o: ti.types.ndarray()):
        for i in o:
            o[i] = t.sample_lod(uv[i], 0.0)

    uv = ti.Vector.ndarray(2, ti.f32, len(UVS))
    uv.from_numpy(UVS)
    out = ti.Vector.ndarray(4, ti.f32, len(UVS))
    write(tex)
    sample(tex, uv, out)
    # lavapipe filters unorm8 texels in fixed point (its results are multiples of 1/255): the
    # f32 weights here differ from it by less than one step; f16 stores differ by < 1 f16 ulp
    atol = {'rgba8': 1 / 255, 'rg16f': 1e-7}.get(name, 2e-7)
    np.testing.assert_allclose(out.to_numpy(), TAICHI_SAMPLED[name], rtol=1e-6, atol=atol)


def test_fetch_fills_missing_channels_as_taichi():
    tex = ti.Texture(ti.Format.rg16f, (4, 3))

    @ti.kernel
    def write(t: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.rg16f, lod=0)):
        for i, j in t:
            t.store(ti.Vector([i, j]),
                    ti.Vector([0.1 * i + 0.03 * j + 0.001, -0.2 + 0.5 * i, 1.7, 0.3333]))

    @ti.kernel
    def read(t: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.rg16f, lod=0),
             o: ti.types.ndarray()):
        for i, j in o:
            o[i, j] = t.load(ti.Vector([i, j]))

    out = ti.Vector.ndarray(4, ti.f32, (4, 3))
    write(tex)
    read(tex, out)
    taichi = [[0.00099945068359375, -0.199951171875], [0.0309906005859375, -0.199951171875],
              [0.06097412109375, -0.199951171875], [0.1009521484375, 0.2998046875],
              [0.1309814453125, 0.2998046875], [0.160888671875, 0.2998046875],
              [0.200927734375, 0.7998046875], [0.23095703125, 0.7998046875],
              [0.260986328125, 0.7998046875], [0.30078125, 1.2998046875],
              [0.330810546875, 1.2998046875], [0.36083984375, 1.2998046875]]
    expect = np.array([r + [0.0, 1.0] for r in taichi], np.float32).reshape(4, 3, 4)
    np.testing.assert_array_equal(out.to_numpy(), expect)


def _linear_reference(texels, uv):
    """numpy: Vulkan's linear filter with repeat addressing (texels [x, (y, (z)), 4])."""
    dims = texels.shape[:-1]
    axes = []
    for u, n in zip(uv, dims):
        x = np.float64(u) * n - 0.5
        f = np.floor(x)
        axes.append(((int(f) % n, (int(f) + 1) % n), x - f))
    out = np.zeros(4)
    for corner in range(1 << len(dims)):
        idx, w = [], 1.0
        for a, ((i0, i1), t) in enumerate(axes):
            hi = corner >> a & 1
            idx.append(i1 if hi else i0)
            w *= t if hi else 1 - t
        out += w * texels[tuple(idx)]
    return out


@pytest.mark.parametrize('shape', [(7,), (5, 3, 4)])
def test_sample_lod_1d_3d_against_numpy(shape):
    rng = np.random.default_rng(len(shape))
    values = rng.random(shape + (4,)).astype(np.float32)
    tex = ti.Texture(ti.Format.rgba32f, shape)
    src = ti.Vector.ndarray(4, ti.f32, shape)
    src.from_numpy(values)
    tex.from_ndarray(src)
    uvs = rng.uniform(-1.5, 2.5, (64, len(shape))).astype(np.float32)
    uv = ti.Vector.ndarray(len(shape), ti.f32, 64)
    uv.from_numpy(uvs)
    out = ti.Vector.ndarray(4, ti.f32, 64)

    @ti.kernel
    def sample(t: ti.types.texture(num_dimensions=len(shape)), uv: ti.types.ndarray(),
               o: ti.types.ndarray()):
        for i in o:
            o[i] = t.sample_lod(uv[i], 0.0)

    sample(tex, uv, out)
    expect = np.array([_linear_reference(values, u) for u in uvs])
    np.testing.assert_allclose(out.to_numpy(), expect, atol=2e-6)


def test_from_field_to_field_quantises():
    f = ti.Vector.field(2, ti.f32, (3, 2))
    vals = np.array([[[0.2, 5.0], [0.5, 0.1]], [[-1.0, 0.3], [0.7, 0.9]],
                     [[0.001, 0.0], [1.0, 0.25]]], np.float32)
    f.from_numpy(vals)
    tex = ti.Texture(ti.Format.r8, (3, 2))
    tex.from_field(f)
    g = ti.field(ti.f32, (3, 2))
    tex.to_field(g)
    expect = np.rint(np.clip(vals[..., 0], 0, 1) * np.float32(255)) / 255
    np.testing.assert_allclose(g.to_numpy(), expect, rtol=1e-7)


def test_image_round_trip_and_orientation():
    Image = pytest.importorskip('PIL.Image')
    pixels = np.zeros((2, 3, 3), np.uint8)  # 2 rows, 3 columns
    for y in range(2):
        for x in range(3):
            pixels[y, x] = [10 * x + y, 100 + x, 7]
    img = Image.fromarray(pixels)
    tex = ti.Texture(ti.Format.rgba8, img.size)
    tex.from_image(img)
    assert (np.asarray(tex.to_image()) == pixels).all()
    # Taichi loads np.rot90(pixels) (PIL's rotate(90, expand=True)), alpha 0
    out = ti.Vector.ndarray(4, ti.f32, (3, 2))

    @ti.kernel
    def read(t: ti.types.texture(num_dimensions=2), o: ti.types.ndarray()):
        for i, j in o:
            o[i, j] = t.fetch(ti.Vector([i, j]), 0)

    read(tex, out)
    got = np.rint(out.to_numpy() * 255).astype(np.uint8)
    np.testing.assert_array_equal(got[..., :3], np.rot90(pixels))
    assert (got[..., 3] == 0).all()
    with pytest.raises(ti.TaichiRuntimeError, match='rgba8'):
        ti.Texture(ti.Format.r32f, (3, 2)).to_image()


def test_sampled_texture_compiles_once_for_every_format():
    @ti.kernel
    def read(t: ti.types.texture(num_dimensions=2), o: ti.types.ndarray()):
        for i, j in o:
            o[i, j] = t.fetch(ti.Vector([i, j]), 0).x

    o = ti.ndarray(ti.f32, (2, 2))
    for fmt in (ti.Format.r32f, ti.Format.rgba8, ti.Format.r16f):
        tex = ti.Texture(fmt, (2, 2))
        read(tex, o)
        assert (o.to_numpy() == 0).all()
    assert len(read.instances) == 1


def test_argument_errors():
    @ti.kernel
    def write(t: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.r32f, lod=0)):
        for i, j in t:
            t.store(ti.Vector([i, j]), ti.Vector([1.0, 0.0, 0.0, 0.0]))

    with pytest.raises(ti.TaichiRuntimeError, match='dimension mismatch for argument t: '
                                                    'expected 2, got 3'):
        write(ti.Texture(ti.Format.r32f, (2, 2, 2)))
    with pytest.raises(ti.TaichiRuntimeError, match='expected Format.r32f, got Format.rgba8'):
        write(ti.Texture(ti.Format.rgba8, (2, 2)))
    with pytest.raises(ti.TaichiRuntimeError, match='must be a ti.Texture'):
        write(ti.ndarray(ti.f32, (2, 2)))

    @ti.kernel
    def bad(t: ti.types.texture(num_dimensions=1)):
        t.store(ti.Vector([0]), ti.Vector([1.0, 0.0, 0.0, 0.0]))

    with pytest.raises(ti.TaichiCompilationError, match='rw_texture'):
        bad(ti.Texture(ti.Format.r32f, 4))
    with pytest.raises(NotImplementedError, match='integer texels'):
        ti.Texture(ti.Format.r32i, (2, 2))
    t = ti.Texture(ti.Format.rg16f, (5, 2, 3))  # Taichi's attributes
    assert (t.fmt, t.dtype, t.num_channels, t.num_dims, t.shape) == \
        (ti.Format.rg16f, ti.f16, 2, 3, (5, 2, 3))
    with pytest.raises(ValueError, match='1 to 3'):
        ti.Texture(ti.Format.r32f, (2, 2, 2, 2))


def test_graph_texture_arguments():
    @ti.kernel
    def write(t: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.rgba8, lod=0)):
        for i, j in t:
            t.store(ti.Vector([i, j]), ti.Vector([0.3, i * 0.25, j * 0.5, 1.0]))

    @ti.kernel
    def read(t: ti.types.texture(num_dimensions=2), o: ti.types.ndarray()):
        for i, j in o:
            o[i, j] = t.fetch(ti.Vector([i, j]), 0)

    rw = ti.graph.Arg(ti.graph.ArgKind.RWTEXTURE, 'tex', ndim=2, fmt=ti.Format.rgba8)
    arr = ti.graph.Arg(ti.graph.ArgKind.NDARRAY, 'o', ti.math.vec4, ndim=2)
    gb = ti.graph.GraphBuilder()
    gb.dispatch(write, rw)
    gb.dispatch(read, rw, arr)
    g = gb.compile()
    tex = ti.Texture(ti.Format.rgba8, (4, 2))
    o = ti.Vector.ndarray(4, ti.f32, (4, 2))
    g.run({'tex': tex, 'o': o})
    i, j = np.meshgrid(np.arange(4), np.arange(2), indexing='ij')
    expect = np.stack([np.full((4, 2), 76 / 255), np.rint(i * 0.25 * 255) / 255,
                       np.rint(j * 0.5 * 255) / 255, np.ones((4, 2))], -1)
    np.testing.assert_allclose(o.to_numpy(), expect, atol=1e-7)
    with pytest.raises(ti.TaichiRuntimeError, match='fmt'):
        g.run({'tex': ti.Texture(ti.Format.r32f, (4, 2)), 'o': o})


def test_taichi_example_simple_texture():
    """Taichi's examples/rendering/simple_texture.py (smaller, an rgba8 texture at 0.7, headless):
    the sums and pixels Taichi 1.7.4 prints on lavapipe."""
    from vkdiff.examples.patterns import taichi_logo
    res, k = (64, 48), 32
    pixels = ti.Vector.field(3, dtype=float, shape=res)
    texture = ti.Texture(ti.Format.rgba8, (k, k))

    @ti.kernel
    def make_texture(tex: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.rgba8, lod=0),
                     n: ti.i32):
        for i, j in ti.ndrange(n, n):
            ret = ti.cast(taichi_logo(ti.Vector([i, j]) / n), ti.f32)
            tex.store(ti.Vector([i, j]), ti.Vector([ret * 0.7, 0.0, 0.0, 0.0]))

    @ti.kernel
    def paint(t: ti.f32, tex: ti.types.texture(num_dimensions=2), n: ti.i32):
        for i, j in pixels:
            uv = ti.Vector([i / res[0], j / res[1]])
            warp_uv = uv + ti.Vector([ti.cos(t + uv.x * 5.0), ti.sin(t + uv.y * 5.0)]) * 0.1
            c = ti.math.vec4(0.0)
            if uv.x > 0.5:
                c = tex.sample_lod(warp_uv, 0.0)
            else:
                c = tex.fetch(ti.cast(warp_uv * n, ti.i32), 0)
            pixels[i, j] = [c.r, c.g, c.a]

    make_texture(texture, k)
    paint(0.1, texture, k)
    p = pixels.to_numpy()
    assert p[:32, :, 0].sum() == pytest.approx(228.2588348388672, abs=1e-3)  # fetched: exact
    # sampled (lavapipe filters unorm8 in fixed point: within one step a pixel)
    assert p[..., 0].sum() == pytest.approx(957.7843017578125, abs=32 * 48 / 255)
    np.testing.assert_allclose(p[50, 30], [0.6039215922355652, 0.0, 0.0], atol=1 / 255)
    assert (p[..., 1:] == 0).all()


def test_texture_through_funcs_and_scalar_1d_coordinates():
    tex = ti.Texture(ti.Format.r32f, 4)

    @ti.func
    def put(t: ti.template(), i):
        t.store(ti.Vector([i]), ti.Vector([i * 0.5, 0.0, 0.0, 0.0]))

    @ti.func
    def get(t, u):
        return t.sample_lod(u, 0.0)

    @ti.kernel
    def write(t: ti.types.rw_texture(num_dimensions=1, fmt=ti.Format.r32f, lod=0)):
        for i in range(4):
            put(t, i)

    @ti.kernel
    def read(t: ti.types.texture(num_dimensions=1)) -> ti.f32:
        # texels 0, 0.5, 1, 1.5: u = 0.25 is halfway between texels 0 and 1, u = 0.5 between 1
        # and 2, u = 0.0 between texel 3 and (wrapped) texel 0
        return get(t, 0.25).x + t.sample_lod(0.5, 0.0).x * 10 + t.sample_lod(0.0, 0.0).x * 100 \
            + t.shape[0] * 1000

    write(tex)
    assert read(tex) == pytest.approx(0.25 + 7.5 + 75 + 4000)
