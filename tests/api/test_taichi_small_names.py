"""Small Taichi names: ti.assume_in_range, ti.examples.patterns.taichi_logo (2568 black pixels
of 64x64, as Taichi 1.7.4 paints them), taichi.lang.util.to_numpy_type / to_pytorch_type,
ti._logging, and ti.init's Taichi options (CompileConfig fields read back, TI_<NAME>, KeyError)."""
import numpy as np
import pytest

import vkdiff as ti


def test_taichi_logo_and_assume_in_range():
    img = ti.field(ti.i32, (64, 64))

    @ti.kernel
    def paint():
        for i, j in img:
            img[i, j] = ti.examples.patterns.taichi_logo(ti.Vector([i, j]) / 64)
            img[i, j] += ti.assume_in_range(i, 32, -32, 32) - i

    paint()
    assert img.to_numpy().sum() == 2568  # Taichi 1.7.4 (arch=cpu) prints 2568
    # pixels Taichi 1.7.4 paints: (0, 0) 1, (16, 32) 0, (48, 32) 1, (32, 16) 0
    assert [img[0, 0], img[16, 32], img[48, 32], img[32, 16]] == [1, 0, 1, 0]


def test_to_numpy_and_pytorch_type():
    from vkdiff.lang.util import to_numpy_type, to_pytorch_type
    assert to_numpy_type(ti.f32) is np.float32 and to_numpy_type(ti.u1) is np.bool_
    assert to_numpy_type(ti.u16) is np.uint16 and to_numpy_type(ti.f16) is np.float16
    torch = pytest.importorskip('torch')
    assert to_pytorch_type(ti.i64) is torch.int64 and to_pytorch_type(ti.u1) is torch.bool


def test_logging_module_and_levels(capsys):
    from vkdiff import _logging
    ti.init(log_level=ti.WARN)
    assert not _logging.is_logging_effective('info') and _logging.is_logging_effective('error')
    _logging.info('hidden {}', 1)
    _logging.warn('shown {}', 2)
    err = capsys.readouterr().err
    assert 'shown 2' in err and 'hidden' not in err
    ti.set_logging_level(ti.TRACE)
    assert _logging.is_logging_effective(ti.TRACE)
    ti.init()
    assert not _logging.is_logging_effective('debug')  # the default, info


def test_init_options_read_back_from_arguments_and_environment(monkeypatch):
    cfg = ti.lang.impl.current_cfg()
    assert cfg.verbose is True and cfg.flatten_if is False and cfg.advanced_optimization is True
    ti.init(flatten_if=True, advanced_optimization=False)
    assert cfg.flatten_if is True and cfg.advanced_optimization is False
    monkeypatch.setenv('TI_DEBUG', '1')
    monkeypatch.setenv('TI_PRINT_KERNEL_LLVM_IR', '1')
    ti.init()
    assert cfg.debug is True and cfg.check_out_of_bound is True and cfg.print_kernel_llvm_ir
    ti.init(debug=False)  # the argument overrides TI_DEBUG
    assert cfg.debug is False
    monkeypatch.setenv('TI_LOG_LEVEL', 'error')
    assert ti.init(_test_mode=True).log_level == 'error'


def test_init_unknown_option_is_key_error():
    with pytest.raises(KeyError, match='foo_bar'):
        ti.init(debug=True, foo_bar=233)
