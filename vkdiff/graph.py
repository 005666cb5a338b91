"""API layer: ``ti.graph`` (Taichi's compute graphs): a GraphBuilder records kernel dispatches
whose arguments are symbolic ``ti.graph.Arg``s (or constants); ``compile()`` gives a Graph whose
``run({name: value})`` launches the kernels in order with the named values bound.

vkdiff runs a graph as those launches (each kernel is compiled on its first launch as usual); a
launch whose arguments are those of the previous run replays the commands it recorded then
(launch/replay.py: no argument binding or packing), the others launch as usual. Taichi's graphs
exist mainly for ahead-of-time export, which vkdiff does not do.
Texture arguments (ArgKind.TEXTURE with ndim, ArgKind.RWTEXTURE with ndim and fmt) take a
ti.Texture at run(); its dimensions and format are checked there (lang/texture.py).
"""
import enum
import warnings

from . import types as T
from .errors import CompileError, TaichiRuntimeError
from .lang.ndarray import _element_type, NdarrayType, Ndarray
from .lang.texture import Texture, format_info
from .lang.matrix import Matrix
from .launch.replay import GraphReplay


class ArgKind(enum.Enum):
    SCALAR = 0
    NDARRAY = 1
    MATRIX = 2
    TEXTURE = 3
    RWTEXTURE = 4


class Arg:
    """A named graph argument: Arg(ArgKind.NDARRAY, 'x', dtype=ti.math.vec2, ndim=1),
    Arg(ArgKind.SCALAR, 'dt', ti.f32), Arg(ArgKind.MATRIX, 'm', dtype=ti.math.mat2)."""

    def __init__(self, tag, name, dtype=None, ndim=None, field_dim=None, fmt=None, **kwargs):
        if not isinstance(tag, ArgKind):
            raise TaichiRuntimeError(f"tag must be a ArgKind variant, but found {type(tag)}.")
        if not isinstance(name, str):
            raise TaichiRuntimeError(f"name must be a string, but found {type(name)}.")
        if tag in (ArgKind.TEXTURE, ArgKind.RWTEXTURE):
            _texture_kwargs(tag, dtype, fmt, kwargs)
            dtype = None
        elif fmt is not None:
            raise TaichiRuntimeError(f"Invalid argument: fmt, only texture graph arguments take "
                                     f"a format")
        if kwargs:
            raise TaichiRuntimeError(f"Invalid argument: {', '.join(kwargs)}, you can only create "
                                     f"a graph argument with: tag, name, dtype, ndim")
        self.tag, self.name, self.dtype, self.fmt = tag, name, dtype, fmt
        self.ndim = ndim if ndim is not None else field_dim

    def __repr__(self):
        return f'ti.graph.Arg({self.tag.name}, {self.name!r})'


def _texture_kwargs(tag, dtype, fmt, kwargs):
    """Taichi 1.7's checks of a texture Arg's arguments (the ones removed in 1.7.0 are errors)."""
    if dtype is not None:
        warnings.warn("The dtype argument for texture will be deprecated in v1.6.0, use format "
                      "instead.", DeprecationWarning)
    if 'shape' in kwargs:
        raise TaichiRuntimeError("The shape argument for texture is deprecated in v1.6.0, and it "
                                 "is removed in v1.7.0. Please use ndim instead. (Note that you no "
                                 "longer need the exact texture size.)")
    if 'channel_format' in kwargs or 'num_channels' in kwargs:
        if fmt is not None:
            raise TaichiRuntimeError("channel_format and num_channels are deprecated, please do "
                                     "not specify channel_format/num_channels and fmt at the same "
                                     "time.")
        if tag is ArgKind.RWTEXTURE:
            raise TaichiRuntimeError("The channel_format and num_channels arguments for texture "
                                     "are deprecated in v1.6.0, and they are removed in v1.7.0. "
                                     "Please use fmt instead.")
        raise TaichiRuntimeError("The channel_format and num_channels arguments are no longer "
                                 "required for non-RW textures since v1.6.0, and they are removed "
                                 "in v1.7.0. Please remove them.")
    if tag is ArgKind.RWTEXTURE:
        if fmt is None:
            raise TaichiRuntimeError("fmt is required for a RWTEXTURE graph argument")
        format_info(fmt)


def _elem(dtype):
    """(scalar DataType or None, element shape or None) of an Arg's or annotation's dtype."""
    return (None, None) if dtype is None else _element_type(dtype)


def _check_against_kernel(kernel_fn, args):
    """Taichi compiles a kernel for the graph's Args at dispatch: an Arg whose ndim or dtype
    differs from the kernel's annotation is a compile error there."""
    sig = getattr(kernel_fn, 'sig', None)
    if sig is None:
        return
    for p, a in zip(sig.parameters.values(), args):
        if not isinstance(a, Arg):
            continue
        ann = p.annotation
        if a.tag is ArgKind.NDARRAY and isinstance(ann, NdarrayType):
            if ann.ndim is not None and a.ndim is not None and a.ndim != ann.ndim:
                raise CompileError(f"graph argument {a.name!r}: ndim={a.ndim} doesn't match "
                                   f"kernel's annotated ndim={ann.ndim}")
            (ad, aes), (kd, kes) = _elem(a.dtype), _elem(ann.dtype)
            if ad is not None and kd is not None and (ad is not kd or (
                    aes is not None and kes is not None and aes != kes)):
                raise CompileError(f"graph argument {a.name!r}: dtype {a.dtype} doesn't match "
                                   f"kernel's annotated dtype {ann.dtype}")
        elif a.tag is ArgKind.SCALAR and isinstance(ann, T.DataType) and a.dtype is not None:
            if T.resolve(a.dtype) is not ann:
                raise CompileError(f"graph argument {a.name!r}: dtype {a.dtype} doesn't match "
                                   f"kernel's annotated dtype {ann}")


class Sequential:
    """An ordered list of dispatches (GraphBuilder.create_sequential())."""

    def __init__(self, names=None):
        self.nodes = []
        self.names = {} if names is None else names   # Arg name -> Arg, shared by a builder

    def dispatch(self, kernel_fn, *args):
        if not (hasattr(kernel_fn, 'instance') or getattr(kernel_fn, '_vkdiff_kernel', False)):
            raise TaichiRuntimeError(f"graph dispatch: {kernel_fn!r} is not a ti.kernel")
        for a in args:
            if not isinstance(a, Arg):
                continue
            old = self.names.setdefault(a.name, a)
            if (old.tag, old.ndim, _elem(old.dtype)) != (a.tag, a.ndim, _elem(a.dtype)):
                raise TaichiRuntimeError(f"graph argument name {a.name!r} is used for two "
                                         f"different arguments ({old.tag.name}, {a.tag.name})")
        _check_against_kernel(getattr(kernel_fn, '_target', kernel_fn), args)
        self.nodes.append((kernel_fn, args))

    def append(self, node):
        if not isinstance(node, Sequential):
            raise TaichiRuntimeError("GraphBuilder.append takes a Sequential "
                                     "(from create_sequential())")
        self.nodes.append(node)

    def _flat(self):
        for n in self.nodes:
            if isinstance(n, Sequential):
                yield from n._flat()
            else:
                yield n


class GraphBuilder:
    def __init__(self):
        self._seq = Sequential()

    def dispatch(self, kernel_fn, *args):
        self._seq.dispatch(kernel_fn, *args)

    def create_sequential(self):
        return Sequential(self._seq.names)

    def append(self, node):
        self._seq.append(node)

    def compile(self):
        return Graph(list(self._seq._flat()))


class Graph:
    def __init__(self, dispatches):
        self.dispatches = dispatches
        self.replay = GraphReplay()
        self.args = {}
        for _, args in dispatches:
            for a in args:
                if isinstance(a, Arg):
                    if self.args.setdefault(a.name, a).tag != a.tag:
                        raise TaichiRuntimeError(f"graph argument {a.name!r} is used with two "
                                                 f"kinds: {self.args[a.name].tag.name} and "
                                                 f"{a.tag.name}")

    def run(self, args):
        """Launch the dispatches in order; `args` maps every Arg name to its value (an ndarray,
        a Python number or a ti.Matrix)."""
        missing = sorted(set(self.args) - set(args))
        if missing:
            raise TaichiRuntimeError(f"graph run: missing arguments {', '.join(missing)}")
        for name, a in self.args.items():
            v = args[name]
            ok = {ArgKind.NDARRAY: isinstance(v, Ndarray),
                  ArgKind.SCALAR: isinstance(v, (int, float)) and not isinstance(v, bool),
                  ArgKind.MATRIX: isinstance(v, Matrix),
                  ArgKind.TEXTURE: isinstance(v, Texture),
                  ArgKind.RWTEXTURE: isinstance(v, Texture)}[a.tag]
            if not ok:
                raise TaichiRuntimeError(f"graph argument {name!r} ({a.tag.name}): got "
                                         f"{type(v).__name__}")
            if a.tag in (ArgKind.TEXTURE, ArgKind.RWTEXTURE):
                if a.ndim is not None and v.num_dims != a.ndim:
                    raise TaichiRuntimeError(f"Dispatch node is compiled for argument {name} with "
                                             f"ndim={a.ndim}, but got a texture with "
                                             f"ndim={v.num_dims}")
                if a.fmt is not None and v.fmt is not a.fmt:
                    raise TaichiRuntimeError(f"Dispatch node is compiled for argument {name} with "
                                             f"fmt={a.fmt}, but got a texture with fmt={v.fmt}")
            if a.tag is not ArgKind.NDARRAY:
                continue
            if a.ndim is not None and len(v.shape) != a.ndim:
                raise TaichiRuntimeError(f"Dispatch node is compiled for argument {name} with "
                                         f"ndim={a.ndim}, but got an ndarray with "
                                         f"ndim={len(v.shape)}")
            ad, aes = _elem(a.dtype)
            if ad is not None and (v.dtype is not ad or aes is not None and
                                   tuple(v.elem_shape) != tuple(aes)):
                raise TaichiRuntimeError(f"Dispatch node is compiled for argument {name} with "
                                         f"dtype={a.dtype}, but got an ndarray with "
                                         f"dtype={v.dtype}{list(v.elem_shape) or ''}")
        self.replay.run([(kernel_fn, tuple(args[a.name] if isinstance(a, Arg) else a
                                           for a in dargs))
                         for kernel_fn, dargs in self.dispatches])
