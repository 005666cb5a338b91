"""ti.graph: a GraphBuilder's dispatches (with symbolic ndarray / scalar / matrix arguments and
nested sequentials) run in order with the values given to Graph.run; bad arguments are
TaichiRuntimeError."""
import numpy as np
import pytest

import vkdiff as ti


def test_graph_runs_dispatches_in_order():
    @ti.kernel
    def init(x: ti.types.ndarray(dtype=ti.math.vec2, ndim=1), s: ti.f32):
        for i in x:
            x[i] = ti.Vector([i * s, 1.0])

    @ti.kernel
    def step(x: ti.types.ndarray(dtype=ti.math.vec2, ndim=1), m: ti.math.mat2):
        for i in x:
            x[i] = m @ x[i]

    sym_x = ti.graph.Arg(ti.graph.ArgKind.NDARRAY, 'x', dtype=ti.math.vec2, ndim=1)
    sym_s = ti.graph.Arg(ti.graph.ArgKind.SCALAR, 's', ti.f32)
    sym_m = ti.graph.Arg(ti.graph.ArgKind.MATRIX, 'm', dtype=ti.math.mat2)
    b = ti.graph.GraphBuilder()
    b.dispatch(init, sym_x, sym_s)
    seq = b.create_sequential()
    for _ in range(3):
        seq.dispatch(step, sym_x, sym_m)
    b.append(seq)
    g = b.compile()
    x = ti.ndarray(ti.math.vec2, shape=5)
    m = ti.Matrix([[1.0, 2.0], [0.0, 1.0]])
    g.run({'x': x, 's': 0.5, 'm': m})
    M = np.array([[1.0, 2.0], [0.0, 1.0]])
    start = np.stack([np.arange(5) * 0.5, np.ones(5)], axis=1)
    expect = start @ np.linalg.matrix_power(M, 3).T
    assert np.allclose(x.to_numpy(), expect)
    with pytest.raises(ti.TaichiRuntimeError, match='missing arguments s'):
        g.run({'x': x, 'm': m})
    with pytest.raises(RuntimeError, match="'s'"):
        g.run({'x': x, 's': x, 'm': m})
    with pytest.raises(RuntimeError, match='compiled for argument x with ndim=1'):
        g.run({'x': ti.ndarray(ti.math.vec2, shape=(2, 2)), 's': 1.0, 'm': m})
    with pytest.raises(RuntimeError, match='but got an ndarray with dtype=f32'):
        g.run({'x': ti.ndarray(ti.f32, shape=5), 's': 1.0, 'm': m})
    with pytest.raises(RuntimeError, match='tag'):
        ti.graph.Arg('ndarray', 'x')
    with pytest.raises(RuntimeError, match='fmt is required'):  # textures: tests/lang/test_texture.py
        ti.graph.Arg(ti.graph.ArgKind.RWTEXTURE, 't', ndim=2)


def test_graph_args_checked_against_kernels_at_dispatch():
    @ti.kernel
    def k(pos: ti.types.ndarray(dtype=ti.f32, ndim=1), val: ti.f32):
        for i in pos:
            pos[i] = val

    @ti.kernel
    def k2(v: ti.f32):
        pass

    nd = ti.graph.ArgKind.NDARRAY
    with pytest.raises(ti.TaichiCompilationError, match="annotated ndim"):
        ti.graph.GraphBuilder().dispatch(k, ti.graph.Arg(nd, 'p', ti.f32, ndim=2),
                                         ti.graph.Arg(ti.graph.ArgKind.SCALAR, 'v', ti.f32))
    with pytest.raises(ti.TaichiCompilationError, match="annotated dtype"):
        ti.graph.GraphBuilder().dispatch(k, ti.graph.Arg(nd, 'p', ti.i32, 1),
                                         ti.graph.Arg(ti.graph.ArgKind.SCALAR, 'v', ti.f32))
    with pytest.raises(ti.TaichiCompilationError, match="annotated dtype"):
        ti.graph.GraphBuilder().dispatch(k, ti.graph.Arg(nd, 'p', ti.f32, 1),
                                         ti.graph.Arg(ti.graph.ArgKind.SCALAR, 'v', ti.i32))
    b = ti.graph.GraphBuilder()
    b.dispatch(k, ti.graph.Arg(nd, 'p', ti.f32, 1), 2.5)     # a constant argument
    with pytest.raises(RuntimeError, match="'p' is used for two"):
        b.create_sequential().dispatch(k2, ti.graph.Arg(ti.graph.ArgKind.SCALAR, 'p', ti.f32))
    a = ti.ndarray(ti.f32, shape=3)
    b.compile().run({'p': a})
    assert (a.to_numpy() == 2.5).all()
