"""Benchmark program (tools/bench_programs.py): a 2-D discrete-element method (DEM) of granular
material, the struct-heavy particle shape: a column of grains (16,384 by default; DEM_GRAINS
sets the count) collapses under gravity in a box.

- The grains are a `@ti.dataclass` struct field (position, velocity, force, radius, mass, id).
- One kernel, `step()`, holds eight top-level loops: clear the cell list; count grains per cell
  with `ti.atomic_add` into one component of a vector field; a `ti.loop_config(serialize=True)`
  prefix sum; scatter the grains into cell order (whole-struct stores `gf2[k] = gf[i]`); copy
  them back (`gf[i] = gf2[i]`); a contact force per neighbour pair through a `ti.func`, with
  contact statistics by atomics into a vector field's components; integrate.
- Contacts: linear spring-dashpot on the normal overlap, walls as springs; semi-implicit Euler.

Per iteration: `substeps` launches of step(), then the statistics are read (one sync); the
value returned is the kinetic energy. The grains are reordered every step, so a grain's data
moves between slots: its id identifies it. Written for `import taichi as ti`; vkdiff runs it
unchanged through an alias."""
import math
import os

import numpy as np
import taichi as ti

n_grains = int(os.environ.get('DEM_GRAINS', 16384))
substeps = 20
dt = 1e-4
gravity = -9.8
r_max = 0.002
stiffness = 2e3
damping = 0.4
density = 1000.0
domain = 1.0
cell = 2 * r_max  # a contact partner lies in the 3 x 3 neighbouring cells
n_cells_side = int(domain / cell)
n_cells = n_cells_side * n_cells_side

vec2 = ti.types.vector(2, float)
vec3 = ti.types.vector(3, float)


@ti.dataclass
class Grain:
    p: vec2
    v: vec2
    f: vec2
    r: float
    m: float
    gid: ti.i32


gf = Grain.field(shape=n_grains)
gf2 = Grain.field(shape=n_grains)
cell_info = ti.Vector.field(2, dtype=ti.i32, shape=n_cells)  # (count, first slot)
cell_fill = ti.field(dtype=ti.i32, shape=n_cells)
stats = ti.Vector.field(3, dtype=float, shape=())  # (contacts, elastic energy, kinetic energy)


@ti.func
def cell_of(p):
    c = ti.cast(ti.floor(p / cell), ti.i32)
    c = ti.max(ti.min(c, n_cells_side - 1), 0)
    return c, c[1] * n_cells_side + c[0]


@ti.func
def contact_force(i, j):
    """Grain j's force on grain i, and its elastic energy (0 without overlap)."""
    d = gf[i].p - gf[j].p
    dist = d.norm()
    overlap = gf[i].r + gf[j].r - dist
    f = vec2(0.0, 0.0)
    e = 0.0
    if overlap > 0 and dist > 1e-12:
        n = d / dist
        vn = (gf[i].v - gf[j].v).dot(n)
        m_eff = gf[i].m * gf[j].m / (gf[i].m + gf[j].m)
        c = 2 * damping * ti.sqrt(stiffness * m_eff)
        f = (stiffness * overlap - c * vn) * n
        e = 0.5 * stiffness * overlap * overlap
    return f, e


@ti.func
def wall_force(p, v, r):
    f = vec2(0.0, 0.0)
    for k in ti.static(range(2)):
        lo = r - p[k]
        if lo > 0:
            f[k] += stiffness * lo - 0.2 * v[k]
        hi = p[k] + r - domain
        if hi > 0:
            f[k] -= stiffness * hi + 0.2 * v[k]
    return f


@ti.kernel
def step():
    stats[None] = vec3(0.0, 0.0, 0.0)
    for c in range(n_cells):  # 1: clear the cell list
        cell_info[c] = ti.Vector([0, 0])
        cell_fill[c] = 0
    for i in range(n_grains):  # 2: grains per cell
        _, c = cell_of(gf[i].p)
        ti.atomic_add(cell_info[c][0], 1)
    ti.loop_config(serialize=True)
    for c in range(n_cells):  # 3: each cell's first slot, a prefix sum in one thread
        start = 0
        if c > 0:
            start = cell_info[c - 1][1] + cell_info[c - 1][0]
        cell_info[c][1] = start
    for i in range(n_grains):  # 4: scatter the grains into cell order
        _, c = cell_of(gf[i].p)
        k = cell_info[c][1] + ti.atomic_add(cell_fill[c], 1)
        gf2[k] = gf[i]
    for i in range(n_grains):  # 5: back, now in cell order
        gf[i] = gf2[i]
    for i in range(n_grains):  # 6: contact forces from the 3 x 3 neighbouring cells
        ci, _ = cell_of(gf[i].p)
        f = wall_force(gf[i].p, gf[i].v, gf[i].r)
        contacts = 0
        energy = 0.0
        for dy in range(-1, 2):
            for dx in range(-1, 2):
                cx, cy = ci[0] + dx, ci[1] + dy
                if 0 <= cx < n_cells_side and 0 <= cy < n_cells_side:
                    info = cell_info[cy * n_cells_side + cx]
                    for j in range(info[1], info[1] + info[0]):
                        if j != i:
                            fij, e = contact_force(i, j)
                            f += fij
                            if e > 0:
                                contacts += 1
                                energy += e
        gf[i].f = f
        ti.atomic_add(stats[None][0], contacts * 0.5)
        ti.atomic_add(stats[None][1], energy * 0.5)
    for i in range(n_grains):  # 7: integrate
        g = gf[i]
        g.v += (g.f / g.m + vec2(0.0, gravity)) * dt
        g.p += g.v * dt
        gf[i].v = g.v
        gf[i].p = g.p
        ti.atomic_add(stats[None][2], 0.5 * g.m * g.v.dot(g.v))



def initial_state(n=n_grains, seed=1):
    """A column of grains on a square lattice (slightly overlapping neighbours, random radii)
    in the lower-left of the box, at rest: dict of numpy arrays by member name."""
    rng = np.random.default_rng(seed)
    side = int(math.ceil(math.sqrt(n)))
    k = np.arange(n)
    p = np.stack([(k % side) * 1.9 * r_max + 1.5 * r_max,
                  (k // side) * 1.9 * r_max + 1.5 * r_max], 1)
    p += rng.uniform(-0.05, 0.05, (n, 2)) * r_max
    r = rng.uniform(0.8, 1.0, n) * r_max
    return {'p': p, 'v': np.zeros((n, 2)), 'f': np.zeros((n, 2)), 'r': r,
            'm': density * math.pi * r * r, 'gid': k.astype(np.int32)}


def reset():
    st = initial_state()
    for name in ('p', 'v', 'f', 'r', 'm'):
        getattr(gf, name).from_numpy(st[name].astype(getattr(gf, name).to_numpy().dtype))
    gf.gid.from_numpy(st['gid'])


reset()


def iteration():
    for _ in range(substeps):
        step()
    return stats[None][2]
