"""Codegen stage: global memory. The push-constant layout, and the storage-buffer side of a
task's codegen (a mixin of codegen/spirv.py's TaskCodegen): element pointers, vector loads of
vec2/vec4 elements, texel reads of read-only fields on CPU drivers, integer views for
compare-exchange atomics, gload / gstore / atomic."""
import math

from .. import ir
from .. import types as T
from . import atomics, narrow


PUSH_BYTES = 128  # the push constant space every Vulkan device has

# Texel reads: (dtype name, components per texel) -> (VkFormat, SPIR-V image format)
TEXEL_FORMATS = {('f32', 1): (100, 'R32f'), ('f32', 2): (103, 'Rg32f'), ('f32', 4): (109, 'Rgba32f'),
                 ('i32', 1): (99, 'R32i'), ('u32', 1): (98, 'R32ui')}


class PushLayout:
    """Byte layout of the push constants: launch id, seed, then the kernel's scalar arguments.
    Arguments that do not fit in the 128 bytes (a 1024-entry vector argument) are spilled: each
    goes to 32-bit words of `spill` (a temporary Buffer of u32, written by the launcher before
    each launch and bound to every task) instead. `where[k]` is argument k's place: ('push',
    member index) or ('spill', first word)."""

    def __init__(self, arg_types):
        self.members = [T.u32, T.u32]
        self.offsets = [0, 4]
        self.where, self.spill_types = [], []
        off, words = 8, 0
        for t in arg_types:
            if t is T.u1:
                t = T.i32
            size = t.nbytes
            at = (off + size - 1) // size * size
            if (at + size + 7) // 8 * 8 <= PUSH_BYTES and not words:
                self.where.append(('push', len(self.members)))
                self.members.append(t)
                self.offsets.append(at)
                off = at + size
            else:  # in argument order: once one spills, the rest follow
                self.where.append(('spill', words))
                self.spill_types.append((len(self.where) - 1, t, words))
                words += size // 4
        self.size = (off + 7) // 8 * 8
        self.spill = ir.Buffer('kernel_arguments', T.u32, (words,), role='temp') \
            if words else None

    def arg_type(self, a):
        return next(t for k, t, _ in self.spill_types if k == a)

    def split(self, values):
        """(the pushed values, the spilled ones as u32 words) of the arguments in order."""
        if self.spill is None:
            return values, None
        import numpy as np
        pushed = [v for v, (kind, _) in zip(values, self.where) if kind == 'push']
        words = np.zeros(self.spill.shape[0], np.uint32)
        for k, t, w in self.spill_types:
            raw = np.array([values[k]], dtype=t.np).view(np.uint32)
            words[w:w + len(raw)] = raw
        return pushed, words

    def struct_format(self):
        """A struct module format string packing (launch id, seed, *args)."""
        fmt, pos = '<', 0
        codes = {'f32': 'f', 'f64': 'd', 'i32': 'i', 'u32': 'I', 'i64': 'q', 'u64': 'Q'}
        for t, off in zip(self.members, self.offsets):
            if off > pos:
                fmt += f'{off - pos}x'
            fmt += codes[t.name]
            pos = off + t.nbytes
        if self.size > pos:
            fmt += f'{self.size - pos}x'
        return fmt


class GlobalMemory:
    """Storage buffers of a task: binding k is the k-th field (self.fields)."""

    def storage_type(self, f):
        if f.dtype.is_narrow:
            return T.u32  # packed words (codegen/narrow.py)
        if f in self.int_view:
            return T.u64 if f.dtype.bits == 64 else T.u32
        return f.dtype

    def gen_gload(self, s):
        if s.buf in self.texels:
            return self.texel_load(s)
        if s.buf.dtype.is_narrow:
            return narrow.load(self, s)
        vec = self.vector_load(s)
        if vec is not None:
            return self.op('OpCompositeExtract', self.t(s.dtype), vec, str(s.attrs.get('comp', 0)))
        ptr = self.element_ptr(s)
        v = self.op('OpLoad', self.t(self.storage_type(s.buf)), ptr)
        return self.from_storage(s.buf, v)

    def gen_gstore(self, s):
        if s.buf.dtype.is_narrow:
            narrow.store(self, s)
            return
        self.forget_vector_loads(s.buf)
        if s in self.pair_stores:
            first = self.pair_stores[s]
            if first is None:
                return  # stored with its pair, by the later of the two
            self.store_pair(first, s)
            return
        ptr = self.element_ptr(s)
        self.emit(f'OpStore {ptr} {self.to_storage(s.buf, self.values[s.value_arg])}')

    def dim(self, buf, k, n):
        """The size of axis k of a Buffer: the constant n, or for an ndarray argument (and its
        gradient / tangent) the run-time size, a hidden push-constant argument (meta['dims'])."""
        b = buf
        while b is not None and 'dims' not in b.meta:
            b = b.primal
        if b is None:
            return self.m.i32(n)
        return self.push_value(2 + b.meta['dims'][k])

    def element_ptr(self, s):
        f = s.buf
        st = self.storage_type(f)
        if f.role == 'shared':  # ti.simt.block.SharedArray: a Workgroup array variable
            return self.op('OpAccessChain', self.m.pointer('Workgroup', self.t(st)),
                           self.shared_var(f, st), self.element_index(s))
        return self.op('OpAccessChain', self.m.pointer('StorageBuffer', self.t(st)),
                       self.buffers[f], self.m.i32(0), self.element_index(s))

    def shared_var(self, f, st):
        m = self.m
        arr = m.array(self.t(st), math.prod(f.shape) * f.ncomp)
        return m._cached(('block_shared', f), lambda: m._global(
            'sh', f'OpVariable {m.pointer("Workgroup", arr)} Workgroup'))

    def gen_barrier(self, s):
        """ti.simt.block.sync(): control barrier over the workgroup, acquire-release on
        workgroup memory."""
        m = self.m
        self.emit(f'OpControlBarrier {m.u32(2)} {m.u32(2)} {m.u32(0x108)}')

    def row_major(self, s):
        """The flat element index (i32) of a global access's indices: row-major over its
        buffer's (possibly run-time) shape, or Taichi's address `sum(index * stride)` for a
        field stored in its SNode nesting order (meta['strides']); None without indices."""
        f, i32 = s.buf, self.t(T.i32)
        idx = None
        strides = f.meta.get('strides')
        if strides is not None:  # a field in its SNode nesting order (lang/layout.py)
            for ix, st in zip(s.indices, strides):
                v = self.values[ix]
                if st != 1:
                    v = self.op('OpIMul', i32, v, self.m.i32(st))
                idx = v if idx is None else self.op('OpIAdd', i32, idx, v)
            return idx
        for k, (ix, n) in enumerate(zip(s.indices, f.shape)):
            v = self.values[ix]
            idx = v if idx is None else self.op('OpIAdd', i32, self.op('OpIMul', i32, idx,
                                                                       self.dim(f, k, n)), v)
        return idx

    def element_index(self, s):
        """The flat index (i32) of the component a global access names: row-major over the
        buffer's (possibly run-time) shape, components innermost."""
        f = s.buf
        i32 = self.t(T.i32)
        idx = self.row_major(s)
        comp = s.attrs.get('comp', 0)
        if f.ncomp > 1:
            base = self.op('OpIMul', i32, idx, self.m.i32(f.ncomp)) if idx is not None else None
            idx = self.op('OpIAdd', i32, base, self.m.i32(comp)) if base is not None else self.m.i32(comp)
        elif idx is None:
            idx = self.m.i32(0)
        return idx

    def vector_load(self, s):
        """Components of one vec2/vec4 field element read in the same block share one vector
        load (through a second, vector-typed view of the same binding). With `pack64` (a CPU
        driver with 64-bit integers) a 32-bit element's pairs of components are read as 64-bit
        words: lavapipe runs each component of a storage-buffer load as a loop over the SIMD
        lanes, so a vec2 costs one loop instead of two (tools/profile_tasks.py).
        A field the task also writes: a store or atomic ends the reuse of the loads before it
        (forget_vector_loads), and both views are decorated Aliased (the driver must not move
        a load through one view across a store through the other)."""
        f = s.buf
        if f.ncomp not in (2, 4) or f in self.int_view or f.dtype.is_narrow or not s.indices or \
                f.role == 'shared' or s.attrs.get('comp', 0) < 0:
            return None
        self.vec_fields.add(f)
        key = (id(s.parent), f, tuple(id(i) for i in s.indices))
        vec = self.vec_loads.get(key)
        if vec is None:
            m = self.m
            vt = m.vector(self.t(f.dtype), f.ncomp)
            idx = self.row_major(s)
            if self.pack64 and f.dtype.bits == 32:
                words = f.ncomp // 2
                wt = self.t(T.u64) if words == 1 else m.vector(self.t(T.u64), words)
                var = m._cached(('vecview', f, 64), lambda: self._vector_view(f, wt, 8 * words))
                ptr = self.op('OpAccessChain', m.pointer('StorageBuffer', wt), var, m.i32(0), idx)
                vec = self.op('OpBitcast', vt, self.op('OpLoad', wt, ptr))
            else:
                var = m._cached(('vecview', f), lambda: self._vector_view(
                    f, vt, f.dtype.nbytes * f.ncomp))
                ptr = self.op('OpAccessChain', m.pointer('StorageBuffer', vt), var, m.i32(0), idx)
                vec = self.op('OpLoad', vt, ptr)
            self.vec_loads[key] = vec
        return vec

    def plan_texels(self, limit, max_views):
        """Texel reads (CPU drivers with the runtime feature texel_reads; limit: the device's
        maxTexelBufferElements, 0 turns them off): a field the task reads and never writes is
        also bound as a storage texel buffer view (binding len(fields) + j) and its loads are
        OpImageRead. lavapipe (Mesa 22.3 gallivm) runs each storage-buffer load as a loop over
        the SIMD lanes with a bounds check per lane, but reads an image buffer with one vector
        gather: 8 loads per element cost 435 us per 16K elements as storage-buffer loads, 12
        (contiguous) to 75 (scattered) as texel reads (tools/access_forms). A 32-bit vec2/vec4
        element is one Rg32f/Rgba32f texel. Returns [(field index, VkFormat)] for the runtime;
        fills self.texels {field: (binding, image format, components per texel)}.
        A field the task also stores to qualifies when its loads precede its stores
        (loads_before_stores): `x[t, i] = x[t - 1, i] + ...`."""
        self.texels = {}
        if not limit:
            return []
        read = self.loads_before_stores()
        out = []
        for k, f in enumerate(self.fields):
            if f not in read or f.dtype.is_narrow or \
                    f in self.int_view or f.role == 'shared' or f.shape is None or \
                    self._runtime_shaped(f) or len(out) >= max_views:
                continue
            per = f.ncomp if f.ncomp in (2, 4) and f.dtype is T.f32 else 1
            fmt = TEXEL_FORMATS.get((f.dtype.name, per))
            if fmt is None or math.prod(f.shape) * f.ncomp // per > limit:
                continue
            self.texels[f] = (len(self.fields) + len(out), fmt[1], per)
            out.append((k, fmt[0]))
        return out

    def loads_before_stores(self):
        """The fields the task loads and whose every load comes before every store to them in
        an invocation's program order: no atomic on them, in the IR's program order no load
        after the first store, and no inner loop (for / while: every iteration but the parallel
        loop's, which are other elements: a race if they overlap) holding both a load and a
        store. The stored values are never read back through the texel view (what one
        invocation stores and then loads, passes/forward_globals reuses)."""
        loads, stored, bad = set(), set(), set()
        loops = []  # (loop statement, {fields loaded in it}, {fields stored in it})

        def visit(block):
            for x in block.stmts:
                if x.op == 'gload':
                    loads.add(x.buf)
                    if x.buf in stored:
                        bad.add(x.buf)
                    for _, ld, _ in loops:
                        ld.add(x.buf)
                elif x.op in ('gstore', 'atomic'):
                    stored.add(x.buf)
                    if x.op == 'atomic':
                        bad.add(x.buf)
                    for _, _, st in loops:
                        st.add(x.buf)
                if x.blocks:
                    inner = x.op in ('for', 'while')
                    if inner:
                        loops.append((x, set(), set()))
                    for b in x.blocks:
                        visit(b)
                    if inner:
                        _, ld, st = loops.pop()
                        bad.update(ld & st)
        visit(self.task.body)
        return loads - bad

    @staticmethod
    def _runtime_shaped(f):
        """An ndarray argument (or its gradient / tangent): bound per launch, its shape too."""
        b = f
        while b is not None and 'dims' not in b.meta and b.role != 'arg':
            b = b.primal
        return b is not None

    def texel_load(self, s):
        """A load of a texel-read field: OpImageRead of its texel view (plan_texels); a vec2 /
        vec4 element is read once per block for all its components."""
        m, f = self.m, s.buf
        binding, fmt, per = self.texels[f]
        et = self.t(f.dtype)
        img_t = m._cached(('image', fmt), lambda: m._global(
            'img', f'OpTypeImage {et} Buffer 0 0 0 2 {fmt}'))
        m.capability('ImageBuffer')
        if fmt == 'Rg32f':
            m.capability('StorageImageExtendedFormats')

        def make():
            var = m._global('tex', f'OpVariable {m.pointer("UniformConstant", img_t)} UniformConstant')
            m.decorations.append(f'OpDecorate {var} DescriptorSet 0')
            m.decorations.append(f'OpDecorate {var} Binding {binding}')
            m.decorations.append(f'OpDecorate {var} NonWritable')
            return var
        var = m._cached(('texel', f), make)
        v4 = m.vector(et, 4)
        if per == 1:
            texel = self.op('OpImageRead', v4, self.op('OpLoad', img_t, var), self.element_index(s))
            return self.op('OpCompositeExtract', et, texel, '0')
        key = ('texel', id(s.parent), f, tuple(id(i) for i in s.indices))
        texel = self.vec_loads.get(key)
        if texel is None:
            idx = self.row_major(s)
            texel = self.vec_loads[key] = self.op(
                'OpImageRead', v4, self.op('OpLoad', img_t, var), idx if idx is not None else m.i32(0))
        return self.op('OpCompositeExtract', et, texel, str(s.attrs.get('comp', 0)))

    def _vector_view(self, f, vt, stride):
        m = self.m
        k = self.fields.index(f)
        blk = m.buffer_block(vt, stride)
        var = m._global('vbuf', f'OpVariable {m.pointer("StorageBuffer", blk)} StorageBuffer')
        m.decorations.append(f'OpDecorate {var} DescriptorSet 0')
        m.decorations.append(f'OpDecorate {var} Binding {k}')
        m.decorations.append(f'OpDecorate {var} NonWritable')
        if f in self.vec_written:
            m.decorations.append(f'OpDecorate {var} Aliased')
            if f not in self.aliased:
                self.aliased.add(f)
                m.decorations.append(f'OpDecorate {self.buffers[f]} Aliased')
        return var

    def plan_pair_stores(self):
        """With pack64: stores of components 2k and 2k+1 of one element of a 32-bit vec2/vec4
        field, in one block with only pure arithmetic between them, become one 64-bit store
        at the later one (lavapipe runs each storage-buffer store as a loop over the lanes).
        Returns {later store: earlier store, earlier store: None}."""
        pairs = {}
        if not self.pack64:
            return pairs
        for blk in [self.task.body] + [b for x in ir.walk(self.task.body) for b in x.blocks]:
            open_ = {}  # (buf, comp pair, index ids) -> an unpaired store since the last impure
            for x in blk.stmts:
                if x.op == 'gstore' and self._pairable(x.buf):
                    c = x.attrs.get('comp', 0)
                    key = (x.buf, c // 2, tuple(id(i) for i in x.indices))
                    other = open_.pop(key, None)
                    if other is not None and other.attrs.get('comp', 0) != c:
                        pairs[x], pairs[other] = other, None
                        continue
                    open_ = {k: v for k, v in open_.items() if k[0] is not x.buf}
                    open_[key] = x
                elif x.op not in ir.PURE or x.op == 'random':
                    open_ = {}
        return pairs

    def _pairable(self, f):
        return f.ncomp in (2, 4) and f.dtype.bits == 32 and not f.dtype.is_narrow and \
            f not in self.int_view and f.role != 'shared' and f.shape is not None

    def store_pair(self, a, b):
        """Components 2k, 2k+1 (stores a and b, either order) as one 64-bit word."""
        m, f = self.m, a.buf
        lo, hi = (a, b) if a.attrs.get('comp', 0) % 2 == 0 else (b, a)
        u64 = self.t(T.u64)
        var = m._cached(('pairview', f), lambda: self._pair_view(f))
        idx = self.row_major(lo)
        if idx is None:  # a 0-D field
            idx = m.i32(0)
        if f.ncomp == 4:
            idx = self.op('OpIAdd', self.t(T.i32), self.op('OpIMul', self.t(T.i32), idx, m.i32(2)),
                          m.i32(lo.attrs.get('comp', 0) // 2))
        ptr = self.op('OpAccessChain', m.pointer('StorageBuffer', u64), var, m.i32(0), idx)
        pair = self.op('OpCompositeConstruct', m.vector(self.t(f.dtype), 2),
                       self.values[lo.value_arg], self.values[hi.value_arg])
        self.emit(f'OpStore {ptr} {self.op("OpBitcast", u64, pair)}')

    def _pair_view(self, f):
        """A writable 64-bit-word view of f's binding; f's other views become Aliased."""
        m = self.m
        blk = m.buffer_block(self.t(T.u64), 8)
        var = m._global('pbuf', f'OpVariable {m.pointer("StorageBuffer", blk)} StorageBuffer')
        m.decorations.append(f'OpDecorate {var} DescriptorSet 0')
        m.decorations.append(f'OpDecorate {var} Binding {self.fields.index(f)}')
        m.decorations.append(f'OpDecorate {var} Aliased')
        if f not in self.aliased:
            self.aliased.add(f)
            m.decorations.append(f'OpDecorate {self.buffers[f]} Aliased')
        return var

    def from_storage(self, f, v):
        return self.op('OpBitcast', self.t(f.dtype), v) if f in self.int_view else v

    def to_storage(self, f, v):
        return self.op('OpBitcast', self.t(self.storage_type(f)), v) if f in self.int_view else v

    def gen_atomic(self, s):
        self.forget_vector_loads(s.buf)
        return atomics.gen_atomic(self, s)

    def forget_vector_loads(self, f):
        """A store or atomic on `f`: its vector loads made so far are not reused after it (the
        statements are generated in program order, so whatever follows may read a new value)."""
        if f in self.vec_fields:
            for k in [k for k in self.vec_loads if k[1] is f]:
                del self.vec_loads[k]
