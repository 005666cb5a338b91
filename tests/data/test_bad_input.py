"""Bad input keeps the data (issue 10 items 6-8): every row of the table below is one kind of
bad input a user may give in Python scope. Each must raise a vkdiff exception that is also the
built-in a user would catch, and leave every field's data exactly as it was.

`python tests/data/test_bad_input.py` prints the figures (inputs tried, clear errors, data lost)."""
import numpy as np
import pytest

import vkdiff as ti

NAN, INF = float('nan'), float('inf')


class World:
    """Fields holding known non-zero data, and kernels that write them from their arguments."""

    def __init__(self):
        self.f = ti.field(ti.f32, shape=4)
        self.n = ti.field(ti.i32, shape=4)
        self.u = ti.field(ti.u32, shape=4)
        self.z = ti.field(ti.f64, shape=())
        self.v = ti.Vector.field(3, ti.f32, shape=3)
        self.iv = ti.Vector.field(2, ti.i32, shape=2)
        self.m = ti.Matrix.field(2, 2, ti.f32, shape=2)
        self.s = ti.Struct.field({'pos': ti.math.vec2, 'mass': ti.f32}, shape=3)
        self.loss = ti.field(ti.f32, shape=(), needs_grad=True)
        self.f.from_numpy(np.array([1.5, -2.0, 3.25, 4.0]))
        self.n.from_numpy(np.array([1, -2, 3, 2 ** 31 - 1]))
        self.u.from_numpy(np.array([0, 1, 2, 2 ** 32 - 1]))
        self.z[None] = 0.125
        self.v.from_numpy(np.arange(9, dtype=np.float32).reshape(3, 3) + 0.5)
        self.iv.from_numpy(np.array([[1, 2], [3, 4]]))
        self.m.from_numpy(np.arange(8, dtype=np.float32).reshape(2, 2, 2) - 3)
        self.s.from_numpy({'pos': np.ones((3, 2)) * 7, 'mass': np.array([1.0, 2.0, 3.0])})
        self.loss[None] = 9.0
        f, n, u = self.f, self.n, self.u

        @ti.kernel
        def kf(a: ti.f32):
            f[0] = a

        @ti.kernel
        def ki(a: ti.i32):
            n[0] = a

        @ti.kernel
        def ku(a: ti.u32):
            u[0] = a

        self.kf, self.ki, self.ku = kf, ki, ku

    def fields(self):
        return [self.f, self.n, self.u, self.z, self.v, self.iv, self.m, self.s.pos, self.s.mass,
                self.loss]

    def snapshot(self):
        return [x.to_numpy() for x in self.fields()]


def _set(target, key, value):
    target[key] = value


def _setattr(target, name, value):
    setattr(target, name, value)


# (id, action on a World, the built-in the error must also be)
CASES = [
    # ---- scalar field element assignment
    ('f32=None', lambda w: _set(w.f, 0, None), TypeError),
    ('f32=str', lambda w: _set(w.f, 0, '1.5'), TypeError),
    ('f32=bytes', lambda w: _set(w.f, 0, b'1'), TypeError),
    ('f32=complex', lambda w: _set(w.f, 0, 1 + 2j), TypeError),
    ('f32=list', lambda w: _set(w.f, 0, [1.0]), TypeError),
    ('f32=array2', lambda w: _set(w.f, 0, np.array([1.0, 2.0])), TypeError),
    ('f32=object', lambda w: _set(w.f, 0, object()), TypeError),
    ('f32=Vector', lambda w: _set(w.f, 0, ti.Vector([1.0, 2.0])), TypeError),
    ('f32=dict', lambda w: _set(w.f, 0, {'a': 1}), TypeError),
    ('f32=10**400', lambda w: _set(w.f, 0, 10 ** 400), OverflowError),
    ('i32=1.5', lambda w: _set(w.n, 0, 1.5), TypeError),
    ('i32=np.float64', lambda w: _set(w.n, 0, np.float64(2.0)), TypeError),
    ('i32=nan', lambda w: _set(w.n, 0, NAN), TypeError),
    ('i32=2**40+5', lambda w: _set(w.n, 0, 2 ** 40 + 5), OverflowError),
    ('i32=-2**31-1', lambda w: _set(w.n, 0, -2 ** 31 - 1), OverflowError),
    ('i32=2**70', lambda w: _set(w.n, 0, 2 ** 70), OverflowError),
    ('i32=np.int64 big', lambda w: _set(w.n, 0, np.int64(2 ** 40)), OverflowError),
    ('i32=None', lambda w: _set(w.n, 0, None), TypeError),
    ('i32=str', lambda w: _set(w.n, 0, '5'), TypeError),
    ('u32=-1', lambda w: _set(w.u, 0, -1), OverflowError),
    ('u32=2**32', lambda w: _set(w.u, 0, 2 ** 32), OverflowError),
    ('u32=np.int64(-5)', lambda w: _set(w.u, 0, np.int64(-5)), OverflowError),
    ('0-D=None', lambda w: _set(w.z, None, None), TypeError),
    ('0-D=str', lambda w: _set(w.z, None, 'x'), TypeError),
    # ---- indices
    ('index out of range (read)', lambda w: w.f[4], IndexError),
    ('index out of range (write)', lambda w: _set(w.f, -5, 1.0), IndexError),
    ('index bool', lambda w: _set(w.f, True, 1.0), IndexError),
    ('index bool read', lambda w: w.f[False], TypeError),
    ('index float', lambda w: _set(w.f, 1.0, 1.0), TypeError),
    ('index str', lambda w: w.f['a'], TypeError),
    ('index np.float32', lambda w: w.f[np.float32(1)], TypeError),
    ('index slice', lambda w: _set(w.f, slice(None), 1.0), TypeError),
    ('index too many', lambda w: _set(w.f, (0, 0), 1.0), IndexError),
    ('index None on 1-D', lambda w: _set(w.f, None, 1.0), IndexError),
    ('index on 0-D', lambda w: _set(w.z, 0, 1.0), IndexError),
    ('vector index out of range', lambda w: _set(w.v, 3, [1, 2, 3]), IndexError),
    ('struct index out of range', lambda w: w.s[3], IndexError),
    # ---- vector / matrix elements
    ('vec=short', lambda w: _set(w.v, 0, [1, 2]), ValueError),
    ('vec=long', lambda w: _set(w.v, 0, [1, 2, 3, 4]), ValueError),
    ('vec=Vector short', lambda w: _set(w.v, 0, ti.Vector([1, 2])), ValueError),
    ('vec=with None', lambda w: _set(w.v, 0, [1, None, 3]), TypeError),
    ('vec=with str', lambda w: _set(w.v, 0, [1, 'a', 3]), TypeError),
    ('vec=ragged', lambda w: _set(w.v, 0, [[1, 2], [3]]), ValueError),
    ('vec=None', lambda w: _set(w.v, 0, None), TypeError),
    ('vec=str', lambda w: _set(w.v, 0, 'abc'), TypeError),
    ('vec[i][3]=', lambda w: _set(w.v[0], 3, 1.0), IndexError),
    ('vec[i][0]=None', lambda w: _set(w.v[0], 0, None), TypeError),
    ('vec[i].x=str', lambda w: _setattr(w.v[0], 'x', 'a'), TypeError),
    ('vec[i][1]=complex', lambda w: _set(w.v[0], 1, 1 + 1j), TypeError),
    ('vec[i][str]=', lambda w: _set(w.v[0], 'a', 1.0), TypeError),
    ('ivec=float entry', lambda w: _set(w.iv, 0, [1.5, 2]), TypeError),
    ('ivec=overflow entry', lambda w: _set(w.iv, 0, [2 ** 40, 1]), OverflowError),
    ('ivec[i][0]=-2**40', lambda w: _set(w.iv[0], 0, -2 ** 40), OverflowError),
    ('mat=ragged', lambda w: _set(w.m, 0, [[1, 2], [3]]), ValueError),
    ('mat=with None', lambda w: _set(w.m, 0, [[1, 2], [3, None]]), TypeError),
    ('mat[i][2,0]=', lambda w: _set(w.m[0], (2, 0), 1.0), IndexError),
    ('mat[i][0,0]=str', lambda w: _set(w.m[0], (0, 0), 'a'), TypeError),
    ('mat[i][0]=3 entries', lambda w: _set(w.m[0], 0, [1, 2, 3]), ValueError),
    ('mat[i][0,0,0]=', lambda w: _set(w.m[0], (0, 0, 0), 1.0), IndexError),
    # ---- fill
    ('fill None', lambda w: w.f.fill(None), TypeError),
    ('fill str', lambda w: w.f.fill('a'), TypeError),
    ('fill complex', lambda w: w.f.fill(1j), TypeError),
    ('fill list into scalar field', lambda w: w.f.fill([1.0, 2.0]), TypeError),
    ('fill i32 overflow', lambda w: w.n.fill(2 ** 40 + 5), OverflowError),
    ('fill u32 negative', lambda w: w.u.fill(-1), OverflowError),
    ('fill i32 nan', lambda w: w.n.fill(NAN), ValueError),
    ('fill i32 inf', lambda w: w.n.fill(INF), ValueError),
    ('fill vec short', lambda w: w.v.fill([1, 2]), ValueError),
    ('fill vec with None', lambda w: w.v.fill([1, None, 3]), TypeError),
    ('fill vec None', lambda w: w.v.fill(None), TypeError),
    ('fill mat wrong shape', lambda w: w.m.fill([[1, 2]]), ValueError),
    ('fill 0-D str', lambda w: w.z.fill('x'), TypeError),
    # ---- from_numpy
    ('from_numpy shape', lambda w: w.f.from_numpy(np.zeros(5)), ValueError),
    ('from_numpy extra dim', lambda w: w.f.from_numpy(np.zeros((4, 1))), ValueError),
    ('from_numpy object None/str', lambda w: w.f.from_numpy(np.array([1, 2, None, 'q'], object)),
     TypeError),
    ('from_numpy list with None', lambda w: w.f.from_numpy([1, 2, None, 4]), TypeError),
    ('from_numpy str array', lambda w: w.f.from_numpy(np.array(['1', '2', '3', '4'])), TypeError),
    ('from_numpy complex', lambda w: w.f.from_numpy(np.array([1j, 2, 3, 4])), TypeError),
    ('from_numpy datetime', lambda w: w.f.from_numpy(np.zeros(4, 'datetime64[s]')), TypeError),
    ('from_numpy None', lambda w: w.f.from_numpy(None), TypeError),
    ('from_numpy str', lambda w: w.f.from_numpy('abcd'), TypeError),
    ('from_numpy ragged', lambda w: w.f.from_numpy([[1, 2], [3]]), ValueError),
    ('from_numpy i64 overflow', lambda w: w.n.from_numpy(np.array([2 ** 40, 0, 0, 0])),
     OverflowError),
    ('from_numpy nan into int', lambda w: w.n.from_numpy(np.array([1.0, NAN, 0, 0])), ValueError),
    ('from_numpy 1e20 into int', lambda w: w.n.from_numpy(np.array([1e20, 0, 0, 0])),
     OverflowError),
    ('from_numpy negative into u32', lambda w: w.u.from_numpy(np.array([-1, 0, 0, 0])),
     OverflowError),
    ('from_numpy big object ints', lambda w: w.n.from_numpy(np.array([2 ** 70, 0, 0, 0], object)),
     OverflowError),
    ('from_numpy vec shape', lambda w: w.v.from_numpy(np.zeros((3, 2))), ValueError),
    ('from_numpy vec extra', lambda w: w.v.from_numpy(np.zeros((3, 3, 2))), ValueError),
    ('from_numpy mat shape', lambda w: w.m.from_numpy(np.zeros((2, 4))), ValueError),
    ('from_numpy 0-D shape', lambda w: w.z.from_numpy(np.zeros(1)), ValueError),
    ('copy_from an array', lambda w: w.f.copy_from(np.zeros(4)), TypeError),
    ('copy_from other shape', lambda w: w.f.copy_from(ti.field(ti.f32, shape=5)),
     ValueError),
    # Taichi 1.7.4 compares the fields' shapes (ValueError); vkdiff compared shape + element
    # shape and copied a 4-vector field of shape () into a scalar field of shape (4,)
    ('copy_from vector into scalar', lambda w: w.f.copy_from(ti.Vector.field(4, ti.f32, shape=())),
     ValueError),
    ('copy_from other element shape', lambda w: w.v.copy_from(ti.Vector.field(2, ti.f32, shape=3)),
     ValueError),
    # ---- struct fields
    ('struct from_numpy 2nd member bad',
     lambda w: w.s.from_numpy({'pos': np.zeros((3, 2)), 'mass': np.array([1, 2, None])}),
     TypeError),
    ('struct from_numpy unknown member', lambda w: w.s.from_numpy({'nope': np.zeros(3)}),
     ValueError),
    ('struct from_numpy array', lambda w: w.s.from_numpy(np.zeros(3)), TypeError),
    ('struct fill dict bad member', lambda w: w.s.fill({'pos': [1, 2], 'mass': None}), TypeError),
    ('struct elem = dict bad member', lambda w: _set(w.s, 0, {'pos': [1, 2], 'mass': 'x'}),
     TypeError),
    ('struct elem = number', lambda w: _set(w.s, 0, 5), TypeError),
    ('struct elem member None', lambda w: _setattr(w.s[0], 'mass', None), TypeError),
    ('struct elem vector member wrong shape', lambda w: _setattr(w.s[0], 'pos', [1, 2, 3]),
     ValueError),
    # ---- kernel arguments
    ('arg f32 None', lambda w: w.kf(None), TypeError),
    ('arg f32 str', lambda w: w.kf('1.5'), TypeError),
    ('arg f32 complex', lambda w: w.kf(1 + 2j), TypeError),
    ('arg f32 list', lambda w: w.kf([1.0]), TypeError),
    ('arg f32 array', lambda w: w.kf(np.array([1.0, 2.0])), TypeError),
    ('arg f32 10**400', lambda w: w.kf(10 ** 400), OverflowError),
    ('arg i32 float', lambda w: w.ki(1.5), TypeError),
    ('arg i32 str', lambda w: w.ki('5'), TypeError),
    ('arg i32 2**40+5', lambda w: w.ki(2 ** 40 + 5), OverflowError),
    ('arg i32 np.float32', lambda w: w.ki(np.float32(1)), TypeError),
    ('arg u32 -1', lambda w: w.ku(-1), OverflowError),
    ('arg missing', lambda w: w.ki(), TypeError),
    ('arg extra', lambda w: w.ki(1, 2), TypeError),
    ('arg unknown keyword', lambda w: w.ki(b=1), TypeError),
    # ---- creating fields and layouts
    ("field('int8')", lambda w: ti.field('int8', shape=4), ValueError),  # numpy's name
    ('field(None)', lambda w: ti.field(None, shape=4), ValueError),
    ("field('float')", lambda w: ti.field('float', shape=4), TypeError),
    ('field(np.complex64)', lambda w: ti.field(np.complex64, shape=4), TypeError),
    ('shape=1.5', lambda w: ti.field(ti.f32, shape=1.5), TypeError),
    ('shape=-1', lambda w: ti.field(ti.f32, shape=-1), ValueError),
    ('shape=0', lambda w: ti.field(ti.f32, shape=0), ValueError),
    ("shape='3'", lambda w: ti.field(ti.f32, shape='3'), TypeError),
    ('shape=(2, None)', lambda w: ti.field(ti.f32, shape=(2, None)), TypeError),
    ('shape=True', lambda w: ti.Vector.field(3, ti.f32, shape=True), TypeError),
    ('shape 13-D', lambda w: ti.field(ti.f32, shape=(1,) * 13), ValueError),  # Taichi's limit: 12
    ('int field needs_grad', lambda w: ti.field(ti.i32, shape=4, needs_grad=True), RuntimeError),
    ('root.pointer negative size', lambda w: ti.root.pointer(ti.i, -4), ValueError),
    ('root.bitmasked axis not an axis', lambda w: ti.root.bitmasked(0, 4), TypeError),
    ('root.dynamic two axes', lambda w: ti.root.dynamic(ti.ij, 4), ValueError),
    ('root.hash', lambda w: ti.root.hash(ti.i, 4), NotImplementedError),
    ('dense negative size', lambda w: ti.root.dense(ti.i, -3), ValueError),
    ('dense axis not an axis', lambda w: ti.root.dense(0, 3), TypeError),
    ('dense sizes mismatch', lambda w: ti.root.dense(ti.ij, (2, 3, 4)), ValueError),  # (one size: every axis, as Taichi)
    # ---- Tape
    ('Tape(3.0)', lambda w: ti.Tape(3.0), TypeError),
    ('Tape(1-D field)', lambda w: ti.Tape(w.f), ValueError),
    ('Tape(no grad)', lambda w: ti.Tape(w.z), ValueError),
]


@pytest.mark.parametrize('action,builtin', [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_a_clear_error_and_keeps_the_data(action, builtin):
    w = World()
    before = w.snapshot()
    with pytest.raises(ti.VkdiffError) as e:
        action(w)
    assert isinstance(e.value, builtin), f'{type(e.value).__mro__} is not a {builtin.__name__}'
    assert str(e.value)  # says what went wrong
    for a, b in zip(w.snapshot(), before):
        np.testing.assert_array_equal(a, b)


def test_table_size():
    assert len(CASES) >= 100 and len({c[0] for c in CASES}) == len(CASES)


def test_good_conversions_follow_taichi():
    """What Taichi converts: a float into an int field truncates in from_numpy and fill; bools
    and numpy numbers are numbers; big ints become floats in float fields."""
    w = World()
    w.n.from_numpy(np.array([1.7, -1.7, 2.5, -0.5]))
    np.testing.assert_array_equal(w.n.to_numpy(), [1, -1, 2, 0])
    w.n.fill(-2.9)
    np.testing.assert_array_equal(w.n.to_numpy(), [-2] * 4)
    w.f[0] = True
    w.f[1] = np.float32(0.5)
    w.f[2] = 2 ** 70
    w.f[3] = np.array(4.0)  # a 0-d array, as Taichi accepts
    np.testing.assert_array_equal(w.f.to_numpy(), np.array([1.0, 0.5, 2.0 ** 70, 4.0], np.float32))
    w.n[0] = np.int64(-7)
    w.u[0] = 2 ** 32 - 1
    w.f.from_numpy(np.array([True, False, True, False]))
    assert w.n[0] == -7 and w.u[0] == 2 ** 32 - 1 and w.f.to_numpy().tolist() == [1, 0, 1, 0]
    w.kf(True)
    w.ki(np.int64(3))
    assert w.f[0] == 1.0 and w.n[0] == 3


def main():
    """The figures for the issue note."""
    ti.init()
    tried = clear = accepted = other = lost = 0
    for name, action, builtin in CASES:
        ti.reset()
        ti.init()
        w = World()
        before = w.snapshot()
        tried += 1
        try:
            action(w)
            accepted += 1
            print(f'accepted: {name}')
        except ti.VkdiffError as e:
            clear += isinstance(e, builtin)
            other += not isinstance(e, builtin)
            if not isinstance(e, builtin):
                print(f'not a {builtin.__name__}: {name}: {type(e).__name__}: {e}')
        except Exception as e:  # noqa: BLE001 (an unclear error: counted, shown)
            other += 1
            print(f'unclear: {name}: {type(e).__name__}: {e}')
        lost += any(not np.array_equal(a, b, equal_nan=True) for a, b in zip(w.snapshot(), before))
    print(f'bad inputs tried: {tried}, clear errors (vkdiff + built-in type): {clear}, '
          f'accepted silently: {accepted}, other errors: {other}, data lost: {lost}')


if __name__ == '__main__':
    main()
