"""ti.GUI(fast_gui=True): GUI.img is Taichi 1.7.4's packed frame (vkdiff/gui/fast.py), filled by a
device kernel from a Vector field; checked against a numpy model of Taichi's
vector_to_fast_image (python/taichi/_kernels.py) and against the pixels show() writes."""
import numpy as np
import pytest
from device_requires import missing_features

import vkdiff as ti
from vkdiff._lib.utils import get_os_name


@pytest.fixture(autouse=True)
def fresh_vkdiff(request):
    """These tests need the device (tests/gui/conftest.py's fixture runs none)."""
    ti.init()
    missing = missing_features(request.node, ti.device_features())
    if missing:
        ti.reset()
        pytest.skip(f'needs {" and ".join(missing)}, which this Vulkan device lacks')
    yield
    ti.reset()
    from vkdiff.runtime import validation  # as tests/conftest.py: no validation-layer message
    if validation.enabled():
        msgs = validation.read_new_messages()
        assert not msgs, '\n'.join(msgs[:5])


def taichi_packed(x, is_float):
    """numpy model of Taichi's vector_to_fast_image: x is [i, j, c] from index (0, 0)."""
    w, h = x.shape[:2]
    c = (np.minimum(255, np.maximum(0, (x[..., :3] * np.float32(255)).astype(np.int64)))
         if is_float else x[..., :3].astype(np.int64))
    out = np.zeros(w * h, np.uint32)
    for j in range(h):
        for i in range(w):
            r, g, b = c[i, h - 1 - j]
            out[j * w + i] = (r << 16) + (g << 8) + b
    return out


@pytest.mark.parametrize('dtype', [ti.u8, ti.f32,
                                   pytest.param(ti.f64, marks=pytest.mark.requires('float64'))])
@pytest.mark.parametrize('channels', [3, 4])
@pytest.mark.parametrize('offset', [None, (-4, -2), (3, 5)])
def test_set_image_packs_taichis_fast_frame(dtype, channels, offset, png):
    if get_os_name() == 'osx':
        pytest.skip('the model is the non-macOS packing')
    w, h = 7, 5
    img = ti.Vector.field(channels, dtype, shape=(w, h), offset=offset)
    rng = np.random.RandomState(1)
    x = (rng.randint(0, 256, (w, h, channels)).astype(np.uint8) if dtype == ti.u8
         else rng.uniform(-0.2, 1.2, (w, h, channels)).astype(np.float32))
    img.from_numpy(x)
    gui = ti.GUI('fast', res=(w, h), show_gui=False, fast_gui=True)
    gui.set_image(img)
    want = taichi_packed(img.to_numpy(), dtype != ti.u8)
    assert gui.img.dtype == np.uint32 and gui.img.shape == (w * h,)
    np.testing.assert_array_equal(gui.img, want)
    # the frame shown is the packed one: rows top-down, 0x00RRGGBB
    shown = png(gui).astype(np.uint32)
    np.testing.assert_array_equal((shown[..., 0] << 16) + (shown[..., 1] << 8) + shown[..., 2],
                                  want.reshape(h, w))


def test_set_image_reads_the_field_on_the_device(monkeypatch):
    """No to_numpy of the source field per frame: the kernel reads it where it lives."""
    img = ti.Vector.field(3, ti.f32, shape=(4, 3))
    img.fill(0.5)
    gui = ti.GUI('fast', res=(4, 3), show_gui=False, fast_gui=True)

    def no_readback(*a, **k):
        raise AssertionError('set_image read the source field back')
    monkeypatch.setattr(img, 'to_numpy', no_readback)
    gui.set_image(img)
    assert (gui.img == (127 << 16) + (127 << 8) + 127).all()


def test_fast_gui_numpy_image_and_environment(monkeypatch):
    """A numpy image is packed on the host with the same rules; TI_GUI_FAST=1 turns fast_gui on
    (as in Taichi); a wrong resolution is a ValueError naming both."""
    monkeypatch.setenv('TI_GUI_FAST', '1')
    gui = ti.GUI('fast', res=(3, 2), show_gui=False)
    assert gui.fast_gui
    a = np.zeros((3, 2, 3), np.uint8)
    a[0, 1] = (1, 2, 3)  # x 0, top row
    gui.set_image(a)
    assert gui.img[0] == (1 << 16) + (2 << 8) + 3 and gui.img[1:].sum() == 0
    with pytest.raises(ValueError, match=r'\(2, 2\).*\(3, 2\)'):
        gui.set_image(ti.Vector.field(3, ti.f32, shape=(2, 2)))
