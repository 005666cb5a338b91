"""Replaying a recorded Tape (launch/replay.py): a Tape that repeats the launches of the one
before it replays their recorded commands (no argument packing, no instance lookup, no access
check) and must give the same bits as plain launches; anything that would make a replay wrong
(other launches, other arguments, Python control flow on device values, a new field, recompiled
kernels, ndarrays of another shape) falls back to plain launches, with the reason kept."""
import numpy as np
import pytest

import vkdiff as ti

STEPS, N = 40, 8


def _billiards():
    """A small billiards-like loop: per step one collide and one advance kernel."""
    x = ti.Vector.field(2, dtype=ti.f32, shape=(STEPS, N), needs_grad=True)
    v = ti.Vector.field(2, dtype=ti.f32, shape=(STEPS, N), needs_grad=True)
    imp = ti.Vector.field(2, dtype=ti.f32, shape=(STEPS, N), needs_grad=True)
    v0 = ti.Vector.field(2, dtype=ti.f32, shape=(), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def init():
        for i in range(N):
            x[0, i] = ti.Vector([0.1 * i, 0.05 * (i % 3)])
            v[0, i] = ti.Vector([0.0, 0.0])
        v[0, 0] = v0[None]

    @ti.kernel
    def collide(t: ti.i32):
        for i in range(N):
            for j in range(N):
                if i != j:
                    d = x[t, i] - x[t, j]
                    r = d.norm() + 1e-6
                    if r < 0.12:
                        imp[t + 1, i] += (0.12 - r) * d / r

    @ti.kernel
    def advance(t: ti.i32, dt: ti.f32):
        for i in range(N):
            v[t, i] = v[t - 1, i] + imp[t, i]
            x[t, i] = x[t - 1, i] + dt * v[t, i]

    @ti.kernel
    def compute_loss(t: ti.i32):
        loss[None] = (x[t, N - 1][0] - 0.9) ** 2 + ti.sin(x[t, 1][1])

    @ti.kernel
    def clear():
        for t, i in ti.ndrange(STEPS, N):
            imp[t, i] = ti.Vector([0.0, 0.0])

    def iteration(replay, steps=STEPS, dt=0.01):
        clear()
        with ti.ad.Tape(loss, replay=replay) as tape:
            init()
            for t in range(1, steps):
                collide(t - 1)
                advance(t, dt)
            compute_loss(steps - 1)
        v0[None] = v0[None] - 0.1 * v0.grad[None]
        return tape

    fields = dict(x=x, v=v, imp=imp, v0=v0, loss=loss)
    return fields, iteration


def _snapshot(fields):
    out = {}
    for k, f in fields.items():
        out[k] = f.to_numpy().copy()
        out[k + '.grad'] = f.grad.to_numpy().copy()
    return out


def _run(replay, iters=4, **kw):
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    snaps, tapes = [], []
    for _ in range(iters):
        tapes.append(iteration(replay, **kw))
        snaps.append(_snapshot(fields))
    return snaps, tapes


def _same_bits(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), k


def test_replay_is_bit_identical_to_plain_launches():
    plain, ptapes = _run(False)
    ti.reset()
    ti.init()
    replayed, rtapes = _run(True)
    assert [t.replayed for t in ptapes] == [False] * 4
    assert [t.replayed for t in rtapes] == [False, True, True, True]
    for a, b in zip(plain, replayed):
        _same_bits(a, b)
    assert np.isfinite(plain[-1]['v0.grad']).all() and plain[-1]['v0.grad'].any()


def test_a_repeating_tape_replays_by_default():
    _, tapes = _run(None, iters=3)
    assert [t.replayed for t in tapes] == [False, True, True]


def test_other_scalar_arguments_fall_back():
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    iteration(True)
    t = iteration(True, dt=0.02)  # advance(t, 0.02): not the recorded launch
    assert not t.replayed and 'argument' in t.replay_fallback
    got = _snapshot(fields)
    ti.reset()
    ti.init()
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    iteration(False)
    iteration(False, dt=0.02)
    _same_bits(got, _snapshot(fields))


def test_fewer_launches_fall_back():
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    iteration(True)
    t = iteration(True, steps=STEPS - 5)
    assert not t.replayed and 'compute_loss(34) instead of the recorded collide(34)' in \
        t.replay_fallback
    got = _snapshot(fields)
    assert got['v0.grad'].any()
    ti.reset()
    ti.init()
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    iteration(False)
    iteration(False, steps=STEPS - 5)
    _same_bits(got, _snapshot(fields))


def test_control_flow_on_device_values_falls_back():
    a = ti.field(ti.f32, shape=(), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def double():
        loss[None] += 2 * a[None]

    @ti.kernel
    def square():
        loss[None] += a[None] * a[None]

    def iteration():
        with ti.ad.Tape(loss, replay=True) as tape:
            if a[None] < 1.5:  # a host read of a device value decides the launches
                double()
            else:
                square()
        return tape

    for value, want_grad, replayed in [(1.0, 2.0, False), (1.2, 2.0, True), (3.0, 6.0, False),
                                       (4.0, 8.0, True)]:
        a[None] = value
        tape = iteration()
        assert a.grad[None] == pytest.approx(want_grad)
        assert tape.replayed is replayed, tape.replay_fallback


def test_new_field_between_replays():
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    iteration(True)
    assert iteration(True).replayed
    extra = ti.field(ti.f32, shape=(N,))  # a new field (a new SNode tree, its own storage)
    extra.fill(3)
    t = iteration(True)
    assert extra.to_numpy().tolist() == [3] * N
    got = _snapshot(fields)
    ti.reset()
    ti.init()
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    for _ in range(3):
        iteration(False)
    _same_bits(got, _snapshot(fields))
    assert t.replayed or t.replay_fallback


def test_reinit_recompiles_and_does_not_replay_stale_kernels():
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    iteration(True)
    ti.reset()
    ti.init()
    fields, iteration = _billiards()  # same code: new fields, kernels compiled again
    fields['v0'][None] = [0.7, 0.1]
    t = iteration(True)
    assert not t.replayed
    assert iteration(True).replayed


def test_template_change_recompiles_and_falls_back():
    a = ti.field(ti.f32, shape=(4,), needs_grad=True)
    b = ti.field(ti.f32, shape=(4,), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def acc(f: ti.template(), w: ti.f32):
        for i in range(4):
            loss[None] += w * f[i] * f[i]

    a.from_numpy(np.arange(4, dtype=np.float32))
    b.from_numpy(np.ones(4, np.float32))
    for f, w, replayed in [(a, 1.0, False), (a, 1.0, True), (b, 1.0, False), (a, 1.0, False)]:
        with ti.ad.Tape(loss, replay=True) as tape:
            acc(f, w)
        assert tape.replayed is replayed
        assert f.grad.to_numpy().tolist() == (2 * f.to_numpy()).tolist()


def test_ndarray_of_another_shape_falls_back():
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def total(x: ti.types.ndarray()):
        for i in range(x.shape[0]):
            loss[None] += x[i] * x[i]

    x4 = ti.ndarray(ti.f32, 4, needs_grad=True)
    x6 = ti.ndarray(ti.f32, 6, needs_grad=True)
    x4.from_numpy(np.arange(4, dtype=np.float32))
    x6.from_numpy(np.arange(6, dtype=np.float32))
    for x in (x4, x4, x6):
        with ti.ad.Tape(loss, replay=True) as tape:
            total(x)
        assert loss[None] == pytest.approx(float((x.to_numpy() ** 2).sum()))
        assert x.grad.to_numpy().tolist() == (2 * x.to_numpy()).tolist()
    assert not tape.replayed


def test_host_write_between_replayed_launches_is_ordered():
    x = ti.field(ti.f32, shape=(), needs_grad=True)
    y = ti.field(ti.f32, shape=(), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def copy():
        y[None] = x[None] * 3

    @ti.kernel
    def add():
        loss[None] += y[None] * x[None]

    for k in range(4):
        x[None] = 1.0 + k
        with ti.ad.Tape(loss, replay=True) as tape:
            copy()
            assert y[None] == 3 * (1.0 + k)  # a read between launches sees the first one
            add()
        assert loss[None] == pytest.approx(3 * (1.0 + k) ** 2)
        assert x.grad[None] == pytest.approx(6 * (1.0 + k))
        assert tape.replayed is (k > 0)


def test_replay_off_by_environment(monkeypatch):
    monkeypatch.setenv('VKDIFF_REPLAY', '0')
    _, tapes = _run(None, iters=2)
    assert not tapes[1].replayed and 'VKDIFF_REPLAY' in tapes[1].replay_fallback


def test_ndarray_launches_replay_and_a_new_storage_falls_back():
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def total(x: ti.types.ndarray()):
        for i in range(x.shape[0]):
            loss[None] += x[i] * x[i]

    x = ti.ndarray(ti.f32, 4, needs_grad=True)
    x.from_numpy(np.arange(4, dtype=np.float32))
    for k in range(3):
        with ti.ad.Tape(loss, replay=True) as tape:
            total(x)
        assert tape.replayed is (k > 0)
        assert x.grad.to_numpy().tolist() == [0, 2, 4, 6]
    x._reset()  # (internal) the ndarray gets new storage, as after a re-allocation
    x.from_numpy(np.arange(4, dtype=np.float32) + 1)
    with ti.ad.Tape(loss, replay=True) as tape:
        total(x)
    assert not tape.replayed and 'new storage' in tape.replay_fallback
    assert loss[None] == 30 and x.grad.to_numpy().tolist() == [2, 4, 6, 8]


def test_host_array_arguments_run_live_in_a_replay():
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    w = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def total(x: ti.types.ndarray()):
        for i in range(x.shape[0]):
            loss[None] += w[None] * x[i]

    host = np.arange(4, dtype=np.float32)
    w[None] = 2.0
    for k in range(3):
        host[:] = np.arange(4) + k  # the same numpy array, new contents: read at each launch
        with ti.ad.Tape(loss, replay=True) as tape:
            total(host)
        assert tape.replayed is (k > 0)
        assert loss[None] == 2.0 * (6 + 4 * k) and w.grad[None] == 6 + 4 * k


def _graph_program():
    x = ti.ndarray(ti.f32, 64)

    @ti.kernel
    def noise(x: ti.types.ndarray(), scale: ti.f32):
        for i in range(x.shape[0]):
            x[i] += scale * ti.random()

    @ti.kernel
    def square(x: ti.types.ndarray()):
        for i in range(x.shape[0]):
            x[i] = x[i] * x[i] - 0.5

    s = ti.graph.Arg(ti.graph.ArgKind.SCALAR, 'scale', ti.f32)
    a = ti.graph.Arg(ti.graph.ArgKind.NDARRAY, 'x', ti.f32, ndim=1)
    g = ti.graph.GraphBuilder()
    g.dispatch(noise, a, s)
    g.dispatch(square, a)
    return x, g.compile()


def test_graph_replays_bit_identical_with_random_numbers_and_new_scalars(monkeypatch):
    def run():
        x, graph = _graph_program()
        out, replayed = [], []
        for scale in (1.0, 1.0, 1.0, 0.5, 0.5):
            graph.run({'x': x, 'scale': scale})
            out.append(x.to_numpy().copy())
            replayed.append(graph.replay.replayed)
        return out, replayed

    replayed_out, replayed = run()
    assert replayed == [0, 2, 2, 1, 2]  # a new scale: `noise` launches plainly, once
    monkeypatch.setenv('VKDIFF_REPLAY', '0')
    ti.reset()
    ti.init()
    plain_out, plain_replayed = run()
    assert plain_replayed == [0] * 5
    for a, b in zip(plain_out, replayed_out):
        assert a.tobytes() == b.tobytes()
    assert len({a.tobytes() for a in plain_out}) == 5  # each run drew other random numbers


def test_graph_with_another_ndarray_launches_it():
    x, graph = _graph_program()
    y = ti.ndarray(ti.f32, 32)
    graph.run({'x': x, 'scale': 0.0})
    graph.run({'x': y, 'scale': 0.0})
    assert graph.replay.replayed == 0
    assert np.allclose(y.to_numpy(), -0.5)
    graph.run({'x': y, 'scale': 0.0})
    assert graph.replay.replayed == 2
    assert np.allclose(y.to_numpy(), -0.25)


def test_tuple_and_numpy_scalar_arguments_compare_by_value():
    a = ti.field(ti.f32, shape=(4,), needs_grad=True)
    b = ti.field(ti.f32, shape=(4,), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def acc(fs: ti.template(), w: ti.f32):
        for i in range(4):
            for f in ti.static(fs):
                loss[None] += w * f[i] * f[i]

    a.from_numpy(np.arange(4, dtype=np.float32))
    b.from_numpy(np.ones(4, np.float32))
    cases = [(np.float32(2), False), (np.float32(2), True), (np.float32(3), False),
             (np.float64(3), False), (np.float64(3), True)]
    for w, replayed in cases:
        with ti.ad.Tape(loss, replay=True) as tape:
            acc((a, b), w)  # a new tuple of the same fields at each call
        assert tape.replayed is replayed, tape.replay_fallback
        assert a.grad.to_numpy().tolist() == (2 * float(w) * a.to_numpy()).tolist()
        assert b.grad.to_numpy().tolist() == (2 * float(w) * b.to_numpy()).tolist()


def test_a_replay_skips_instance_lookup_and_packing(monkeypatch):
    from vkdiff.launch import compiled, kernel
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    iteration(True)
    counts = {'instance': 0, 'pack': 0}
    real_instance, real_pack = kernel.Kernel.instance, compiled.TaskList.pack

    def instance(self, args):
        counts['instance'] += 1
        return real_instance(self, args)

    def pack(self, args):
        counts['pack'] += 1
        return real_pack(self, args)
    monkeypatch.setattr(kernel.Kernel, 'instance', instance)
    monkeypatch.setattr(compiled.TaskList, 'pack', pack)
    assert iteration(True).replayed
    assert counts == {'instance': 1, 'pack': 1}  # clear(), outside the Tape


def test_kernels_returning_values_run_live_in_a_replay():
    x = ti.field(ti.f32, shape=(4,), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def peak() -> ti.f32:
        return ti.max(x[0], x[3])

    @ti.kernel
    def total(w: ti.f32):
        for i in range(4):
            loss[None] += w * x[i] ** 2

    for k in range(3):
        x.from_numpy(np.arange(4, dtype=np.float32) + k)
        with ti.ad.Tape(loss) as tape:
            m = peak()  # read back at each launch: the current values
            total(2.0)
        assert m == 3 + k
        assert tape.replayed is (k > 0)
        assert x.grad.to_numpy().tolist() == (4 * x.to_numpy()).tolist()


def test_a_destroyed_snode_tree_drops_the_plans():
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    fb = ti.FieldsBuilder()
    other = ti.field(ti.f32)
    fb.dense(ti.i, 4).place(other)
    tree = fb.finalize()
    iteration(True)
    assert iteration(True).replayed
    tree.destroy()  # kernels are compiled again after this (kernel_epoch)
    t = iteration(True)
    assert not t.replayed
    assert iteration(True).replayed
    got = _snapshot(fields)
    ti.reset()
    ti.init()
    fields, iteration = _billiards()
    fields['v0'][None] = [0.7, 0.1]
    for _ in range(4):
        iteration(False)
    _same_bits(got, _snapshot(fields))


def test_a_vector_matrix_or_struct_changed_in_place_is_not_replayed_stale():
    """A ti.Vector / ti.Matrix / struct argument is one object changed in place between
    iterations (v[0] += 1): the replay compared it by identity and recorded the first
    iteration's values again (the loss and gradient stayed those of iteration 0)."""
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    S = ti.types.struct(a=ti.f32, b=ti.i32)

    @ti.kernel
    def k(v: ti.types.vector(3, ti.f32), m: ti.types.matrix(2, 2, ti.f32), s: S):
        for i in x:
            loss[None] += x[i] * (v[0] + v[1] * 10 + v[2] * 100 + m[0, 1] * 1000 + s.a * 1e4
                                  + s.b * 1e5)

    x.from_numpy(np.ones(4, np.float32))
    v, m = ti.Vector([1.0, 2.0, 3.0]), ti.Matrix([[0.0, 1.0], [0.0, 0.0]])
    s = S(a=1.0, b=2)
    replayed = []
    for it in range(5):
        with ti.ad.Tape(loss) as tape:
            k(v, m, s)
        coef = v[0] + v[1] * 10 + v[2] * 100 + m[0, 1] * 1000 + s.a * 1e4 + s.b * 1e5
        assert loss[None] == 4 * coef, it
        assert x.grad[0] == coef, it
        replayed.append(tape.replayed)
        if it in (1, 2):
            v[0] += 1.0
        if it == 2:
            m[0, 1] += 1.0
        if it == 3:
            s.b += 1
    assert replayed == [False, True, False, False, False]


def test_graph_with_a_vector_argument_changed_in_place():
    @ti.kernel
    def k(a: ti.types.ndarray(ndim=1), v: ti.math.vec2):
        for i in a:
            a[i] += v[0] + v[1] * 10

    A = ti.graph.Arg(ti.graph.ArgKind.NDARRAY, 'a', ti.f32, ndim=1)
    V = ti.graph.Arg(ti.graph.ArgKind.MATRIX, 'v', ti.math.vec2)
    g = ti.graph.GraphBuilder()
    g.dispatch(k, A, V)
    graph = g.compile()
    a = ti.ndarray(ti.f32, 4)
    a.from_numpy(np.zeros(4, np.float32))
    v = ti.math.vec2(1.0, 2.0)
    total = 0.0
    for it in range(4):
        graph.run({'a': a, 'v': v})
        total += v[0] + v[1] * 10
        np.testing.assert_array_equal(a.to_numpy(), np.full(4, total, np.float32))
        v[0] += 1.0
