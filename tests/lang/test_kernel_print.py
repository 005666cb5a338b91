"""print() inside kernels and ti.funcs (issue 9 item 13): the device appends records to a print
buffer; the host formats them (Taichi 1.7.4's printf formats) when it reads the buffer back.
Expected texts are what Taichi 1.7.4 prints on its CPU backend for the same kernels."""
import numpy as np
import pytest

import vkdiff as ti


def lines(capfd):
    out, err = capfd.readouterr()
    return out.splitlines()


def test_scalars_strings_and_types(capfd):
    @ti.kernel
    def k(x: ti.i32, y: ti.f32, d: ti.f64):
        print(x, 1234.5, y)
        print("hello, world! %s %d %f", 233, y)  # '%' in a string is text
        print(True, 1.5, 123, x > 3)
        print("d =", d, "d*3 =", d * 3)

    k(666, 233.3, 0.1)
    ti.sync()
    assert lines(capfd) == ['666 1234.500000 233.300003',
                            'hello, world! %s %d %f 233 233.300003',
                            '1 1.500000 123 1',
                            'd = 0.100000000000 d*3 = 0.300000000000']


def test_narrow_and_64_bit_integers(capfd):
    @ti.kernel
    def k(x: ti.i32, big: ti.i64, ub: ti.u64, u: ti.u32):
        print(ti.cast(x, ti.i8), ti.cast(200, ti.u8), ti.cast(x, ti.i16), ti.cast(x, ti.u16),
              big, ub, u)

    k(666, -(2**63) + 2**31, 2**64 - 1, 4000000000)
    ti.sync()
    assert lines(capfd) == ['-102 200 666 666 -9223372034707292160 18446744073709551615 '
                            '4000000000']


def test_vectors_and_matrices(capfd):
    v = ti.Vector.field(3, ti.f32, shape=())
    m = ti.Matrix.field(2, 2, ti.i32, shape=())

    @ti.kernel
    def k():
        v[None] = ti.Vector([1.5, -2.0, 3.25])
        m[None] = ti.Matrix([[1, 2], [3, -4]])
        print("v", v[None], "m", m[None])
        print(ti.Vector([1, 2]), ti.Matrix([[1.0, 2.0], [3.0, 4.0]]))
        print(f"{v[None]:.1f}", "{:e}".format(m[None] * 0.5))

    k()
    ti.sync()
    assert lines(capfd) == [
        'v [1.500000, -2.000000, 3.250000] m [[1, 2], [3, -4]]',
        '[1, 2] [[1.000000, 2.000000], [3.000000, 4.000000]]',
        '[1.5, -2.0, 3.2] [[5.000000e-01, 1.000000e+00], [1.500000e+00, -2.000000e+00]]']


def test_sep_end_fstring_and_format(capfd):
    @ti.kernel
    def k(x: ti.i32, y: ti.f32, d: ti.f64, u: ti.u32):
        print("a", x, "b", sep="-", end="!\n")
        print("no newline", end="")
        print(" continued")
        print(f"f {x} {y:.2f} {d:e} {u:x} lit {4} {True} {1.23}")
        print("{} and {:.3f} and {name}".format(x, y, name=u))
        print("{:+.3e} {:10.2f}|{:-8d}|{:08.3f}".format(y, y, x, y))
        print("{:o} {:X} {:u}".format(u, u, u))
        print([1, y], (x,), [])
        print(f"list {[x, 2]}", *[x, u], sep=",")
        print()

    k(666, 233.3, 0.1, 255)
    ti.sync()
    assert lines(capfd) == ['a-666-b!',
                            'no newline continued',
                            'f 666 233.30 1.000000000000e-01 ff lit 4 True 1.23',
                            '666 and 233.300 and 255',
                            '+2.333e+02     233.30|666     |0233.300',
                            '377 FF 255',
                            '[1, 233.300003] [666] []',
                            'list [666, 2],666,255',
                            '']


def test_func_serial_loop_order_and_special_values(capfd):
    @ti.func
    def f(a):
        print("in func", a + 1)
        return a * 2

    @ti.kernel
    def k(x: ti.i32, y: ti.f32):
        print(f(x))
        for _ in range(1):
            for i in range(3):  # an inner loop is serial: its prints come in order
                print("i =", i, i * y)
        print(1.0 / (y - y), -1.0 / (y - y))

    k(666, 233.3)
    ti.sync()
    assert lines(capfd) == ['in func 667', '1332', 'i = 0 0.000000', 'i = 1 233.300003',
                            'i = 2 466.600006', 'inf -inf']


def test_nan_keeps_its_sign():
    from vkdiff.passes.printf import format_value
    assert format_value('%f', float('nan')) == 'nan'
    assert format_value('%f', -float('nan')) == '-nan'
    assert format_value('%E', float('nan')) == 'NAN'


def test_parallel_loop_prints_every_iteration(capfd):
    x = ti.field(ti.f32, shape=128)

    @ti.kernel
    def k(s: ti.f32):
        for i in x:
            x[i] = i * s
            print("x[", i, "]=", x[i])

    k(0.5)
    ti.sync()
    got = lines(capfd)
    # the device runs iterations in any order (as Taichi): compare as sets
    assert sorted(got) == sorted(f'x[ {i} ]= {i * 0.5:f}' for i in range(128))


def test_launch_order_and_host_prints_interleave(capfd):
    @ti.kernel
    def a(v: ti.i32):
        print("a", v)

    @ti.kernel
    def b():
        print("b")

    a(1)
    b()
    print("host")
    a(2)
    ti.sync()
    assert lines(capfd) == ['a 1', 'b', 'host', 'a 2']


def test_print_flushes_before_host_print(capfd):
    # Taichi's test_print_seq: no ti.sync() between the launch and the host's print
    @ti.kernel
    def foo():
        print("inside kernel")

    foo()
    print("outside kernel")
    assert "inside kernel\noutside kernel" in capfd.readouterr().out


def test_overflow_prints_what_fits_and_says_how_many_were_dropped(capfd, monkeypatch):
    monkeypatch.setenv('VKDIFF_PRINT_BUFFER_WORDS', '64')
    ti.init()

    @ti.kernel
    def k():
        for i in range(100):
            print("i", i)

    k()
    ti.sync()
    got = lines(capfd)
    printed = [l for l in got if l.startswith('i ')]
    notes = [l for l in got if 'dropped' in l]
    assert len(notes) == 1 and got[-1] == notes[0]
    assert len(printed) == 32  # records of two 32-bit words in 64 words
    assert len(set(printed)) == 32 and all(0 <= int(l.split()[1]) < 100 for l in printed)
    assert '68 print records were dropped' in notes[0]
    # the buffer is empty again for the next launch
    k()
    ti.sync()
    assert len([l for l in lines(capfd) if l.startswith('i ')]) == 32


def test_print_on_a_tape_prints_once(capfd):
    x = ti.field(ti.f32, shape=3, needs_grad=True)
    L = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def k():
        for i in range(1):
            for j in range(3):
                print("x", j, x[j])
                L[None] += x[j] ** 2

    x.from_numpy(np.array([1, 2, 3], np.float32))
    with ti.ad.Tape(L):
        k()
    ti.sync()
    # the adjoint kernel does not print (Taichi's replays the prints: a deliberate difference)
    assert lines(capfd) == ['x 0 1.000000', 'x 1 2.000000', 'x 2 3.000000']
    np.testing.assert_allclose(x.grad.to_numpy(), [2, 4, 6])


def test_print_in_forward_mode_prints_once(capfd):
    x = ti.field(ti.f32, shape=(), needs_dual=True)
    y = ti.field(ti.f32, shape=(), needs_dual=True)

    @ti.kernel
    def k():
        y[None] = x[None] ** 2
        print("y", y[None])

    x[None] = 3.0
    with ti.ad.FwdMode(loss=y, param=x):
        k()
    ti.sync()
    assert lines(capfd) == ['y 9.000000']
    assert y.dual[None] == 6.0


def test_print_is_an_ir_statement():
    @ti.kernel
    def k(x: ti.i32):
        print("x =", x)

    text = k.ir(1)
    assert "print(" in text and "'x = '" in text and "'%d'" in text


def test_spec_mismatch_and_format_errors():
    @ti.kernel
    def bad_spec(x: ti.f32):
        print(f"{x:d}")

    with pytest.raises(ti.TaichiTypeError, match=r"'d' doesn't match 'f32'."):
        bad_spec(1.0)

    @ti.kernel
    def too_many():
        print("{0} {1}".format(1, 2, 3))

    with pytest.raises(ti.TaichiSyntaxError,
                       match=r"Expected 2 positional argument\(s\), but received 3 instead."):
        too_many()

    @ti.kernel
    def unsupported(x: ti.i32):
        print(f"{x:c}")

    with pytest.raises(ti.TaichiTypeError, match=r"conversion 'c' is not supported."):
        unsupported(1)


def test_compile_time_fstring_stays_a_string():
    # an f-string of compile-time values is a Python str in a kernel (e.g. for ti.static use)
    @ti.kernel
    def k() -> ti.i32:
        n = ti.static(len(f"{3}{4}"))
        return n

    assert k() == 2


def test_prints_come_out_when_a_debug_check_fails(capfd):
    ti.init(debug=True)
    x = ti.field(ti.i32, shape=4)

    @ti.kernel
    def k(i: ti.i32):
        print("before", i)
        x[i] = 1

    with pytest.raises(IndexError):
        k(7)
    assert lines(capfd) == ['before 7']
    k(2)
    assert lines(capfd) == ['before 2'] and x[2] == 1


def test_deferred_prints_come_at_the_next_sync(capfd, monkeypatch):
    """VKDIFF_PRINT_SYNC=0: a printing launch does not sync; its records wait in the device
    buffer until the next sync (ti.sync, a host read) or ti.reset, in launch order."""
    monkeypatch.setenv('VKDIFF_PRINT_SYNC', '0')
    ti.init()
    x = ti.field(ti.i32, shape=())

    @ti.kernel
    def k(v: ti.i32):
        x[None] += v
        print("k", v)

    k(1)
    k(2)
    assert lines(capfd) == []
    assert x[None] == 3  # a host read syncs
    assert lines(capfd) == ['k 1', 'k 2']
    k(3)
    ti.sync()
    assert lines(capfd) == ['k 3']
    k(4)
    ti.reset()
    assert lines(capfd) == ['k 4']


def test_deferred_prints_come_at_exit(tmp_path):
    import os
    import subprocess
    import sys
    script = tmp_path / 'p.py'
    script.write_text('import vkdiff as ti\nti.init()\n@ti.kernel\ndef k():\n    print("bye")\n'
                      'k()\nprint("host")\n')
    env = dict(os.environ, VKDIFF_PRINT_SYNC='0')
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ['host', 'bye']


def test_specifiers_merge_as_taichi_documents():
    """The examples of Taichi's merge_printf_specifier (codegen_utils.h), for an f64 value; the
    length modifier is dropped (the host formats exact Python numbers)."""
    from vkdiff.passes.printf import check, merge
    assert [merge(u, ti.f64)[0] for u in ('.2f', 'e', '-+10lf', '.2', None)] == [
        '%.2f', '%.12e', '%-+10.12f', '%.2f', '%.12f']
    assert merge('x', ti.u64)[0] == '%x' and merge(None, ti.i64)[0] == '%d'
    assert merge('x', ti.f32)[0] == '%f'  # another group's conversion: the type's
    assert check('.2d', ti.f32) == "'.2d' doesn't match 'f32'."
    assert check('u', ti.i32) == "'u' doesn't match 'i32'." and check('.3', ti.i32) is None
    assert merge('*d', ti.i32)[0] is None
