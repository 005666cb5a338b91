"""Data floor: Python-scope access to one element of a vector/matrix field, as in Taichi.

`v[i]` returns a Vector (or Matrix) whose entries are the field's: reading them reads the
field's host mirror (cheap: it is downloaded once per launch that wrote it), writing an entry
writes the field. So `v[None][0] -= 0.5`, `m[i][r, c] = 5.0`, `v[i].z = 1.0`, `m[i].fill(0)`
change the field, as Taichi's host accessors do. Arithmetic, printing and numpy conversion see
an ordinary Vector/Matrix holding the current values."""
from ..errors import VkdiffIndexError
from . import convert
from .matrix import Matrix, Vector, _is_runtime


class _Element:
    """Mixin over Matrix/Vector: `entries` is a live view of field[idx] (or one row of it)."""

    def _bind(self, field, idx, row=None):
        self._field, self._idx, self._row = field, idx, row
        if row is not None or len(field.elem_shape) == 1:
            self.n, self.m, self.ndim = (field.m if row is not None else field.n), 1, 1
        else:
            self.n, self.m, self.ndim = field.n, field.m, 2
        return self

    def _where(self):
        return self._idx if self._row is None else self._idx + (self._row,)

    @property
    def entries(self):
        return self._field.storage.for_host_read()[self._where()].ravel().tolist()

    @entries.setter
    def entries(self, values):
        f = self._field
        shape = (f.m,) if self._row is not None else f.elem_shape
        a = convert.element(list(values), f.dtype, shape, f'{f.name}[...]')
        f.storage.for_host_write()[self._where()] = a
        f._host_written(self._idx)

    def __getitem__(self, key):
        if self.ndim == 2 and self.m > 1 and not isinstance(key, tuple) and not _is_runtime(key):
            i = int(key)
            if not -self.n <= i < self.n:
                raise VkdiffIndexError(f'row {i} out of range for a {self.n}x{self.m} matrix')
            return _ElementVector.__new__(_ElementVector)._bind(self._field, self._idx, i % self.n)
        return Matrix.__getitem__(self, key)

    def __setitem__(self, key, value):
        f = self._field
        if _is_runtime(key):
            raise TypeError('a field element is indexed with Python integers in Python scope')
        if self.ndim == 2 and self.m > 1 and not isinstance(key, tuple):
            self[key].entries = value.to_list() if isinstance(value, Matrix) else value
            return
        flat = self._flat(key)
        v = convert.scalar(value, f.dtype, f'{f.name}[...]')
        sub = (flat,) if self.ndim == 1 else divmod(flat, self.m)
        f.storage.for_host_write()[self._where() + tuple(sub)] = v
        f._host_written(self._idx)

    def __reduce__(self):  # pickles/copies as a plain value
        return (Matrix._new, (self.entries, self.n, self.m, self.ndim))

    def __copy__(self):
        return Matrix._new(self.entries, self.n, self.m, self.ndim)

    def __deepcopy__(self, memo):
        return self.__copy__()


class _ElementVector(_Element, Vector):
    pass


class _ElementMatrix(_Element, Matrix):
    pass


def element(field, idx):
    """The live Vector/Matrix of field[idx] (idx: a normalised index tuple)."""
    cls = _ElementVector if len(field.elem_shape) == 1 else _ElementMatrix
    return cls.__new__(cls)._bind(field, idx)
