"""ti.profiler: kernel launches counted and timed (host-measured) with
ti.init(kernel_profiler=True); queries, clearing, the printed table, and nothing recorded when
the profiler is off."""
import pytest

import vkdiff as ti


def _kernels():
    x = ti.field(ti.f32, shape=64, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def fill(v: ti.f32):
        for i in x:
            x[i] = v * i

    @ti.kernel
    def total():
        for i in x:
            loss[None] += x[i] ** 2
    return x, loss, fill, total


def test_profiler_counts_and_times_launches(capsys):
    ti.init(kernel_profiler=True)
    x, loss, fill, total = _kernels()
    for k in range(3):
        fill(k)
    with ti.ad.Tape(loss=loss):
        total()
    q = ti.profiler.query_kernel_profiler_info('fill')
    assert q.counter == 3
    assert 0 < q.min <= q.avg <= q.max
    assert ti.profiler.query_kernel_profiler_info('total').counter == 1
    assert ti.profiler.query_kernel_profiler_info('total.grad').counter == 1
    assert x.grad.to_numpy()[5] == pytest.approx(2 * 2 * 5)   # the adjoint really ran
    t = ti.profiler.get_kernel_profiler_total_time()
    ours = (3 * q.avg + sum(ti.profiler.query_kernel_profiler_info(n).avg
                            for n in ('total', 'total.grad'))) / 1e3
    assert ours <= t + 1e-9   # (plus the builtin kernels the Tape launches to clear gradients)
    ti.profiler.print_kernel_profiler_info()
    out = capsys.readouterr().out
    assert 'host-measured' in out
    n = int(out.split('number of results:')[1].split()[0])
    assert n >= 5
    assert float(out.split('Total execution time:')[1].split()[0]) == pytest.approx(t, abs=1e-3)
    line = next(s for s in out.splitlines() if s.endswith('] fill'))
    assert '3x' in line
    ti.profiler.print_kernel_profiler_info('trace')
    assert sum(s.endswith('] fill') for s in capsys.readouterr().out.splitlines()) == 3
    ti.profiler.clear_kernel_profiler_info()
    assert ti.profiler.query_kernel_profiler_info('fill').counter == 0
    assert ti.profiler.get_kernel_profiler_total_time() == 0
    with pytest.raises(ValueError):
        ti.profiler.print_kernel_profiler_info('nope')


def test_profiler_off_records_nothing(capsys):
    ti.init()
    x, loss, fill, total = _kernels()
    fill(1.0)
    assert ti.profiler.query_kernel_profiler_info('fill').counter == 0
    ti.profiler.print_kernel_profiler_info()
    assert 'kernel_profiler=True' in capsys.readouterr().out
    assert ti.profiler.set_kernel_profiler_toolkit('default')
    assert not ti.profiler.set_kernel_profiler_toolkit('cupti')


def test_init_clears_profiler_records():
    ti.init(kernel_profiler=True)
    x, loss, fill, total = _kernels()
    fill(1.0)
    assert ti.profiler.query_kernel_profiler_info('fill').counter == 1
    ti.init(kernel_profiler=True)
    assert ti.profiler.query_kernel_profiler_info('fill').counter == 0
