"""Data floor: `ti.FieldsBuilder`, Taichi's way to lay out a group of fields after others already
run (`fb.dense(ti.i, n).place(x)`, `tree = fb.finalize()`, `tree.destroy()`). vkdiff has no global
SNode tree to rebuild, so a builder is a root that remembers what it placed: `finalize` closes it,
`destroy` frees those fields' device memory (the fields cannot be used afterwards)."""
from ..errors import VkdiffError
from . import state
from .field import SNode
from .snode import root


class _BuilderNode(SNode):
    """An SNode under a FieldsBuilder: what it places is recorded in the builder."""

    def __init__(self, builder, levels=(), parent=None):
        super().__init__(levels, parent)
        self._builder = builder

    def _child(self, levels):  # (dense() under a builder node)
        return _BuilderNode(self._builder, levels, self)

    def place(self, *fields, offset=None):
        b = self._builder
        if b.finalized:
            raise VkdiffError('this FieldsBuilder is finalized: place fields with a new one')
        super().place(*fields, offset=offset)
        b._fields.extend(_flatten(fields))
        return self


def _flatten(fields):
    for f in fields:
        if isinstance(f, (list, tuple)):
            yield from _flatten(f)
        else:
            yield f


class FieldsBuilder(_BuilderNode):
    """`fb = ti.FieldsBuilder(); fb.dense(ti.i, n).place(x); tree = fb.finalize()`."""

    def __init__(self):
        super().__init__(self)
        self._fields = []
        self.finalized = False

    def finalize(self, raise_warning=True):
        if self.finalized:
            raise VkdiffError('FieldsBuilder.finalize() was called already')
        self.finalized = True
        FieldsBuilder._finalized.append((state.generation, self))
        return SNodeTree(self._fields)

    _finalized = []  # (generation, builder), in finalize order

    @staticmethod
    def _finalized_roots():
        """Taichi's roots of the finalized SNode trees: ti.root's (first), then each finalized
        builder's, since ti.init()."""
        live = [(g, b) for g, b in FieldsBuilder._finalized if g == state.generation]
        FieldsBuilder._finalized[:] = live
        return [root] + [b for _, b in live]

    @property
    def empty(self):
        return not self._fields


class SNodeTree:
    """The fields one FieldsBuilder placed; `destroy()` frees their device memory."""

    def __init__(self, fields):
        self._fields = list(fields)
        self.destroyed = False

    def destroy(self):
        if self.destroyed:
            raise VkdiffError('this SNode tree is destroyed already')
        self.destroyed = True
        # a kernel compiled with these fields (e.g. reading `self.x` of a data-oriented object,
        # whose template key is the object) is rebuilt at its next launch, as Taichi's destroy
        # clears the compiled functions
        state.kernel_epoch += 1
        for f in self._fields:
            f._storage = None  # the device buffer goes with its last reference
            f._shape = None    # any later use says the field is not placed
