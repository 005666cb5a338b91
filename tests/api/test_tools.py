"""ti.tools (Taichi's taichi.tools): imwrite/imread round trips with exact pixel values, file
orientation (images are [x, y] with y up, files top-down), dtype scaling, imresize, imshow
headless, PLYWriter file contents, VideoManager frames."""
import struct
import sys
import warnings

import numpy as np
import pytest

import vkdiff as ti
from vkdiff.gui.png import read_png


@pytest.mark.parametrize('comp,ext', [(1, 'png'), (2, 'png'), (3, 'png'), (4, 'png'),
                                      (3, 'bmp'), (4, 'bmp')])
def test_imwrite_imread_round_trip(tmp_path, comp, ext):
    rng = np.random.default_rng(comp)
    shape = (37, 23) if comp == 1 else (37, 23, comp)
    if comp == 2:  # grey+alpha is not an imwrite input (Taichi's neither): write it as PNG rows
        from vkdiff.gui.png import write_png
        rows = rng.integers(0, 256, (23, 37, 2), dtype=np.uint8)
        write_png(tmp_path / 'ga.png', rows)
        back = ti.tools.imread(str(tmp_path / 'ga.png'))
        assert back.shape == (37, 23, 2) and (back == rows.swapaxes(0, 1)[:, ::-1]).all()
        return
    px = rng.integers(0, 256, shape, dtype=np.uint8)
    fn = str(tmp_path / f'img.{ext}')
    ti.tools.imwrite(px, fn)
    back = ti.tools.imread(fn)
    assert back.dtype == np.uint8
    assert back.shape == (37, 23, comp if ext == 'png' or comp == 4 else 3)
    if comp == 1:
        assert (back[..., 0] == px).all()
    else:
        assert (back == px).all()


def test_imwrite_orientation_and_field_scaling(tmp_path):
    img = ti.Vector.field(3, ti.f32, shape=(4, 3))
    a = np.zeros((4, 3, 3), np.float32)
    a[0, 0] = (1.0, 0.0, 0.0)       # bottom-left: red
    a[3, 2] = (0.0, 0.5, 2.0)       # top-right: half green, blue clamped to 1
    a[1, 1] = (-1.0, 0.25, 0.0)     # negative clamped to 0
    img.from_numpy(a)
    fn = tmp_path / 'o.png'
    ti.tools.imwrite(img, str(fn))
    rows = read_png(fn)              # top-down rows as stored
    assert rows.shape == (3, 4, 3)
    assert list(rows[2, 0]) == [255, 0, 0]
    assert list(rows[0, 3]) == [0, 127, 255]
    assert list(rows[1, 1]) == [0, 63, 0]
    back = ti.tools.imread(str(fn))
    assert list(back[3, 2]) == [0, 127, 255] and list(back[0, 0]) == [255, 0, 0]


def test_imwrite_uint_scaling_and_bad_input(tmp_path):
    v = np.arange(12, dtype=np.uint16).reshape(2, 2, 3) * 20
    fn = str(tmp_path / 'u16.png')
    ti.tools.imwrite(v * 255 + 7, fn)      # Taichi keeps x // (65535 // 256)
    assert (ti.tools.imread(fn) == v).all()
    with pytest.raises(TypeError, match='int64'):
        ti.tools.imwrite(np.zeros((2, 2), np.int64), fn)
    with pytest.raises(ValueError, match='channels'):
        ti.tools.imwrite(np.zeros((2, 2, 5), np.uint8), fn)
    with pytest.raises(FileNotFoundError):
        ti.tools.imread(str(tmp_path / 'none.png'))


def test_imread_channels_hint(tmp_path):
    px = np.array([[[255, 0, 0], [0, 255, 0]], [[0, 0, 255], [10, 20, 30]]], np.uint8)
    fn = str(tmp_path / 'c.png')
    ti.tools.imwrite(px, fn)
    grey = ti.tools.imread(fn, 1)[..., 0]
    r, g, b = px.astype(int).transpose(2, 0, 1)
    expect = (77 * r + 150 * g + 29 * b) >> 8
    assert (grey == expect).all()
    rgba = ti.tools.imread(fn, 4)
    assert (rgba[..., :3] == px).all() and (rgba[..., 3] == 255).all()


def test_jpeg_without_pillow_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, 'PIL', None)
    with pytest.raises(NotImplementedError, match='pillow'):
        ti.tools.imwrite(np.zeros((4, 4, 3), np.uint8), str(tmp_path / 'a.jpg'))


def test_imresize():
    rng = np.random.default_rng(0)
    img = rng.random((9, 7, 3)).astype(np.float32)
    big = ti.tools.imresize(img, 18, 21)
    assert big.shape == (18, 21, 3)
    assert (big[::2, ::3] == img).all() and (big[1::2, 2::3] == img).all()
    assert np.isclose(big.sum(), img.sum() * 6)
    sq = ti.tools.imresize(rng.random((5, 5)), 10)
    assert sq.shape == (10, 10)
    with pytest.raises(ValueError):
        ti.tools.imresize(img, 1, 5)


def test_imshow_headless_returns(monkeypatch):
    monkeypatch.setenv('TI_GUI_SHOW', '0')
    ti.tools.imshow(np.zeros((8, 6, 3), np.float32), 'headless')   # must not loop forever


def test_ply_writer(tmp_path, capsys):
    w = ti.tools.PLYWriter(num_vertices=4, num_faces=2, face_type='tri')
    w.add_vertex_pos(np.array([0., 1, 0, 1]), np.array([0., 0, 1, 1]), np.zeros(4))
    w.add_faces(np.array([0, 1, 2, 1, 3, 2]))
    w.add_vertex_channel('v', 'double', np.array([.5, 1.5, 2.5, 3.5]))
    capsys.readouterr()
    # Taichi's messages, printed (stdout) as Taichi prints them (examples/features/io/export_mesh.py)
    w.add_face_channel('bad', 'foo', np.zeros(2))
    w.add_vertex_channel('v', 'double', np.zeros(4))
    assert capsys.readouterr().out == ('Unknown type foo detected, skipping this channel\n'
                                       'WARNING: duplicate key v detected\n')
    w.vertex_channels.pop()
    w.add_face_id()
    w.export_ascii(str(tmp_path / 'a.ply'))
    text = (tmp_path / 'a.ply').read_text().splitlines()
    assert text[:8] == ['ply', 'format ascii 1.0', 'comment created by PLYWriter',
                        'element vertex 4', 'property float x', 'property float y',
                        'property float z', 'property double v']
    body = text[text.index('end_header') + 1:]
    assert body[3] == '1.0 1.0 0.0 3.5 '  # each value followed by a space, as Taichi writes
    assert body[5] == '3 1 3 2 1 '
    w.export_frame(7, str(tmp_path / 'b.ply'))
    data = (tmp_path / 'b_000007.ply').read_bytes()
    head, body = data.split(b'end_header\n')
    assert b'property list uchar int vertex_indices' in head
    rec = struct.Struct(('<' if sys.byteorder == 'little' else '>') + 'fffd')
    assert rec.unpack_from(body, 3 * rec.size) == (1.0, 1.0, 0.0, 3.5)
    face1 = body[4 * rec.size + 17:]
    assert face1[0] == 3 and struct.unpack(('<' if sys.byteorder == 'little' else '>') + '4i',
                                           face1[1:17]) == (1, 3, 2, 1)
    with pytest.raises(ValueError):
        ti.tools.PLYWriter(num_vertices=0)
    bad = ti.tools.PLYWriter(num_vertices=2)
    with pytest.raises(ValueError, match='positions'):
        bad.export(str(tmp_path / 'c.ply'))


def test_video_manager_writes_frames(tmp_path, monkeypatch):
    vm = ti.tools.VideoManager(output_dir=str(tmp_path), framerate=24, automatic_build=False)
    frame = np.zeros((7, 4, 3), np.uint8)
    frame[0, 0] = 200
    vm.write_frame(frame)
    vm.write_frame(frame)
    rows = read_png(tmp_path / 'frames' / '000001.png')
    assert rows.shape == (4, 6, 3) and rows[3, 0, 0] == 200   # odd width trimmed to 6
    monkeypatch.setenv('PATH', str(tmp_path))  # no ffmpeg
    with pytest.warns(RuntimeWarning, match='ffmpeg'):
        vm.make_video(gif=True, mp4=True)
    assert vm.get_output_filename('.mp4') == str(tmp_path / 'video.mp4')
