"""Frontend floor: a texture kernel parameter as kernel code sees it (lang/texture.py holds the
texture). Its texels are a 4-channel f32 array argument; `fetch`, `load`, `store` and
`sample_lod` are computed here in the shader:
- `fetch(index, lod)` / `load(index)`: the texel (indices clamped into the texture);
- `store(index, value)`: the value in the format's precision, rounded as lavapipe's image
  stores round (unorm: clamped to [0, 1], k / (2^bits - 1) with k the even-rounded f32 product;
  f16: toward zero), channels the format lacks left at (0, 0, 0, 1);
- `sample_lod(uv, lod)`: bilinear (trilinear in 3-D, linear in 1-D) filtering with texel centres
  at (i + 0.5) / n and wrapped (repeat) coordinates, as Taichi's Vulkan sampler; one level, so lod
  is ignored. The weights are f32: a driver that filters unorm texels in fixed point (lavapipe's
  8-bit weights) can differ from it by about one unorm step."""
from .. import types as T
from ..lang.matrix import Matrix, Vector
from . import ops
from .argarray import ArgArray
from .context import Value, emit, error
from .lvalues import field_lvalue


def _components(x):
    """The entries of a vector, list or tuple; a scalar as one entry (1-D textures)."""
    if isinstance(x, Matrix):
        return list(x.entries)
    return list(x) if isinstance(x, (list, tuple)) else [x]


class TextureArg(ArgArray):
    """The kernel-scope value of a ti.types.texture / rw_texture parameter."""

    fmt = None  # the rw_texture's format (None: a sampled texture, read only)
    channels = 4
    kind = 'f32'

    def _indices(self, index):
        comps = _components(index)
        if len(comps) != len(self.shape):
            raise error(f'texture {self.name} has {len(self.shape)} dimensions, got an index '
                        f'with {len(comps)}')
        return [self.index(ops.cast(k, T.i32) if not ops.is_number(k) else int(k), n)
                for k, n in zip(comps, self.shape)]

    def _texel(self, indices):
        return field_lvalue(self, indices).load()

    def fetch(self, index, lod=0):
        return self._texel(self._indices(index))

    def load(self, index):
        if self.fmt is None:
            raise error(f'texture {self.name}: load needs a ti.types.rw_texture parameter')
        return self._texel(self._indices(index))

    def store(self, index, value):
        if self.fmt is None:
            raise error(f'texture {self.name}: store needs a ti.types.rw_texture parameter')
        vals = _components(value)
        if len(vals) != 4:
            raise error(f'texture store takes a 4-component value, got {len(vals)}')
        lv = field_lvalue(self, self._indices(index))
        for c in range(self.channels):
            lv.entries[c].store(ops.as_value(self._quantise(ops.cast(vals[c], T.f32)), T.f32))

    def _quantise(self, v):
        """v (f32) as the format stores it, computed as lavapipe's image stores do (so as
        Taichi's printed values there): unorm k = the even-rounded f32 product v * top; f16
        rounded toward zero (finite values past 65504 become +-65504)."""
        if self.kind.startswith('unorm'):
            top = 255.0 if self.kind == 'unorm8' else 65535.0
            p = ops.binary('mul', ops.binary('max', ops.binary('min', v, 1.0), 0.0), top)
            fl = ops.unary('floor', p)
            d = ops.binary('sub', p, fl)  # exact
            odd = ops.binary('eq', ops.binary('mod', fl, 2.0), 1.0)
            up = ops.binary('lor', ops.binary('gt', d, 0.5),
                            ops.binary('land', ops.binary('eq', d, 0.5), odd))
            return ops.binary('div', ops.select(up, ops.binary('add', fl, 1.0), fl), top)
        if self.kind == 'f16':
            bits = Value(emit('bitcast', T.i32, [ops.as_value(v, T.f32).stmt]))
            a = ops.unary('abs', v)
            neg = ops.binary('lt', bits, 0)
            one = ops.select(neg, -1.0, 1.0)
            finite = ops.binary('ne', ops.binary('band', bits, 0x7F800000), 0x7F800000)
            normal = Value(emit('bitcast', T.f32, [ops.as_value(ops.binary('band', bits, -8192),
                                                                T.i32).stmt]))
            tiny = ops.binary('mul', one, ops.binary('mul', ops.unary('floor', ops.binary(
                'mul', a, 16777216.0)), 1.0 / 16777216.0))
            r = ops.select(ops.binary('lt', a, 2.0 ** -14), tiny, normal)
            big = ops.binary('land', finite, ops.binary('gt', a, 65504.0))
            return ops.select(big, ops.binary('mul', one, 65504.0), r)
        return v

    def sample_lod(self, uv, lod=0.0):
        coords = _components(uv)
        if len(coords) != len(self.shape):
            raise error(f'texture {self.name} has {len(self.shape)} dimensions, got a '
                        f'coordinate with {len(coords)}')
        axes = []  # per axis: (i0, i1, weight of i1), wrapped into [0, n)
        for u, n in zip(coords, self.shape):
            nf = ops.cast(n, T.f32)
            x = ops.binary('sub', ops.binary('mul', ops.cast(u, T.f32), nf), 0.5)
            fl = ops.unary('floor', x)
            w = ops.binary('sub', x, fl)
            i0 = ops.binary('mod', ops.cast(fl, T.i32), n)  # Python-style mod: in [0, n)
            i1 = ops.binary('mod', ops.binary('add', i0, 1), n)
            axes.append((i0, i1, w))
        total = None
        for corner in range(1 << len(axes)):
            weight, idx = None, []
            for a, (i0, i1, w) in enumerate(axes):
                hi = corner >> a & 1
                idx.append(i1 if hi else i0)
                f = w if hi else ops.binary('sub', 1.0, w)
                weight = f if weight is None else ops.binary('mul', weight, f)
            texel = self._texel([ops.as_value(i, T.i32).stmt for i in idx])
            term = ops.binary('mul', texel, weight)
            total = term if total is None else ops.binary('add', total, term)
        return Vector(total.entries) if isinstance(total, Matrix) else total
