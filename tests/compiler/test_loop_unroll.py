"""passes/loop_limit.py's unrolling plan on a lavapipe-like profile (its loop limiter): which
run-time-bound loops are unrolled. llvmpipe runs every unrolled copy, masked, however few
trips remain, so a short loop pays for all of them: a trip count read from a field at a
per-invocation index (a neighbour list: tools/programs/dem.py's contact loop, 2.5x slower at
U = 8) is not unrolled; one from an argument or a scalar field still is (its long loops keep
their full results past 65,535 back-edges, tests/lang/test_values.py)."""
import re

import vkdiff as ti


def _unrolls(kernel, *args):
    ir = kernel.ir(*args, after='loop_limit')
    return [int(u) for u in re.findall(r'= for\(.*unroll=(\d+)', ir)]


def test_neighbour_list_loop_is_not_unrolled():
    start = ti.field(ti.i32, shape=64)
    count = ti.field(ti.i32, shape=64)
    out = ti.field(ti.f32, shape=64)

    @ti.kernel
    def neighbours():
        for i in range(64):
            acc = 0.0
            for j in range(start[i], start[i] + count[i]):
                acc += out[j % 64]
            out[i] = acc

    assert _unrolls(neighbours) == [1]


def test_argument_and_scalar_field_bounds_are_unrolled():
    num = ti.field(ti.i32, shape=())
    out = ti.field(ti.f32, shape=4)

    @ti.kernel
    def by_arg(n: ti.i32):
        for i in range(4):
            acc = 0.0
            for j in range(n):
                acc += 1.0
            out[i] = acc

    @ti.kernel
    def by_scalar_field():
        for i in range(4):
            acc = 0.0
            for j in range(num[None]):
                acc += 1.0
            out[i] = acc

    assert _unrolls(by_arg, 3) == [8]
    assert _unrolls(by_scalar_field) == [8]


def test_short_constant_loop_around_a_run_time_loop_is_unrolled_in_full():
    """The DEM's 3 x 3 neighbouring cells around a neighbour-list loop: the planner unrolls the
    constant loops to their trip count (not the next power of two), and codegen emits them as
    straight code: no loop, so llvmpipe runs no last copy masked to find its lanes done."""
    start = ti.field(ti.i32, shape=64)
    count = ti.field(ti.i32, shape=64)
    out = ti.field(ti.i32, shape=64)

    @ti.kernel
    def cells():
        for i in range(64):
            acc = 0
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    c = (i + dy * 8 + dx) % 64
                    for j in range(start[c], start[c] + count[c]):
                        acc += j * (dx + 2) - dy
            out[i] = acc

    assert _unrolls(cells) == [3, 3, 1]
    asm = cells.ir(after='codegen')
    # the grid-stride loop and the 9 copies of the neighbour-list loop, nothing else
    assert asm.count('OpLoopMerge') == 1 + 9
