"""API layer (face floor): `ti.algorithms.PrefixSumExecutor`, an inclusive in-place prefix sum
(scan) of a 1-D field, as in Taichi 1.7.4 (python/taichi/algorithms/_algorithms.py).

A multi-pass reduce-then-scan, so it needs no forward progress between workgroups (no
decoupled look-back, no spin-wait): level 0 is the field itself; each level is cut into chunks
of CHUNK elements and one invocation sums each chunk into the next level (the levels above 0
lie in one scratch field), until a level fits one chunk. That top level is scanned by one
invocation; then, from the top down, each invocation scans its chunk of a level serially, starting from the
inclusive sum of the chunks before it (the scanned level above). Every pass is its own kernel
launch, so the launches' ordering is the only synchronisation. Work: 2 reads and 1 write per element
(and 1/CHUNK of that above); ceil(log_CHUNK(n)) levels, 2 * levels - 1 launches.

Taichi allows only ti.i32; vkdiff also scans u32 and f32 (and i64/u64/f64 where the device has
them). Integer sums wrap as in Taichi.
"""
from .. import types as T
from ..errors import TaichiRuntimeError, VkdiffTypeError
from ..lang.field import Field, field
from ..lang.fields_builder import FieldsBuilder
from ..lang.ndarray import Ndarray
from ..lang.field import i as axis_i
from ..launch.kernel import kernel, template
from .sort import refuse_gradients

CHUNK = 32  # elements one invocation sums or scans serially in a pass
SCAN_TYPES = ('i32', 'u32', 'f32', 'i64', 'u64', 'f64')

_kernel_cache = {}


def _kernels(dtype):
    """(reduce_chunks, scan_chunks) for one element dtype; each takes its fields as templates
    with the index of their first element, so level 0 is the caller's field itself."""
    key = str(dtype)
    if key in _kernel_cache:
        return _kernel_cache[key]
    zero = 0.0 if str(dtype).startswith('f') else 0  # dtype(0) of a float type is an error

    @kernel
    def reduce_chunks(src: template(), so: T.i32, n: T.i32, dst: template(), do: T.i32,
                      m: T.i32):
        for t in range(m):
            s = dtype(zero)
            hi = min(t * CHUNK + CHUNK, n)
            for q in range(t * CHUNK, hi):
                s += src[so + q]
            dst[do + t] = s

    @kernel
    def scan_chunks(a: template(), ao: T.i32, n: T.i32, sums: template(), so: T.i32, m: T.i32):
        for t in range(m):
            carry = dtype(zero)
            if t > 0:
                carry = sums[so + t - 1]
            hi = min(t * CHUNK + CHUNK, n)
            for q in range(t * CHUNK, hi):
                carry += a[ao + q]
                a[ao + q] = carry

    _kernel_cache[key] = (reduce_chunks, scan_chunks)
    return _kernel_cache[key]


def scan_levels(length):
    """[(start, size)] of each level: level 0 is the field itself (start 0), the others lie one
    after another in the scratch buffer; and the scratch size (at least 1)."""
    levels, start, n = [(0, length)], 0, length
    while n > CHUNK:
        n = (n + CHUNK - 1) // CHUNK
        levels.append((start, n))
        start += n
    return levels, max(start, 1)


class PrefixSumExecutor:
    """Inclusive in-place prefix sum of a 1-D field of `length` elements: `run(arr)`."""

    def __init__(self, length):
        length = int(length)
        if length < 1:
            raise TaichiRuntimeError(f'PrefixSumExecutor: length must be positive, got {length}')
        self.sorting_length = length
        self.levels, self.total = scan_levels(length)
        self._scratch = {}  # dtype name -> (field, its FieldsBuilder tree)

    def _buffer(self, dtype):
        key = str(dtype)
        if key not in self._scratch:
            fb = FieldsBuilder()
            buf = field(dtype)
            fb.dense(axis_i, self.total).place(buf)
            self._scratch[key] = (buf, fb.finalize())
        return self._scratch[key][0]

    def run(self, input_arr):
        """Replace input_arr[o + k] by the sum of input_arr[o .. o + k] (o: its offset)."""
        if isinstance(input_arr, Ndarray):
            raise VkdiffTypeError('PrefixSumExecutor.run scans fields, as Taichi\'s does; got an '
                                  'ndarray')
        if not isinstance(input_arr, Field) or len(input_arr.shape) != 1:
            raise TaichiRuntimeError(f'PrefixSumExecutor.run needs a 1-D scalar field, got '
                                     f'{type(input_arr).__name__}')
        dtype = T.resolve(input_arr.dtype)
        if str(dtype) not in SCAN_TYPES or tuple(input_arr.elem_shape):
            raise VkdiffTypeError(f'PrefixSumExecutor scans fields of {", ".join(SCAN_TYPES)} '
                                  f'scalars, got {input_arr.dtype}')
        if input_arr.shape[0] < self.sorting_length:
            raise TaichiRuntimeError(f'PrefixSumExecutor({self.sorting_length}).run: the field has '
                                     f'only {input_arr.shape[0]} elements')
        refuse_gradients('PrefixSumExecutor.run', (input_arr,))
        reduce_chunks, scan_chunks = _kernels(dtype)
        buf = self._buffer(dtype)
        off = input_arr.offset[0] if input_arr.offset else 0
        # level 0 is input_arr (its first element at index off), the others are in buf
        fields = [(input_arr, off)] + [(buf, start) for start, _ in self.levels[1:]]
        sizes = [n for _, n in self.levels]
        for l in range(len(sizes) - 1):
            reduce_chunks(*fields[l], sizes[l], *fields[l + 1], sizes[l + 1])
        scan_chunks(*fields[-1], sizes[-1], *fields[-1], 1)
        for l in reversed(range(len(sizes) - 1)):
            scan_chunks(*fields[l], sizes[l], *fields[l + 1], sizes[l + 1])

    def destroy(self):
        """Free the scratch fields now (else they live as long as the program; destroying a
        field tree makes every kernel compile again at its next launch, as in Taichi)."""
        for _, tree in self._scratch.values():
            tree.destroy()
        self._scratch = {}
