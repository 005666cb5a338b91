"""Launch floor: `@kernel`. A kernel is compiled on its first call for each combination of
template arguments (frontend -> passes -> codegen -> runtime pipelines) and launched as a
sequence of task dispatches; `kernel.grad` is its adjoint. (`@func`, inlined by the frontend, is
frontend/func.py.)"""
import functools
import inspect

from .. import ir
from .. import types as T
from ..errors import (CompileError, KernelArgumentCountError, located, SourceLocation,
                      TaichiRuntimeTypeError, TaichiSyntaxError, VkdiffError)
from ..frontend import ops
from ..frontend.builder import FunctionBuilder
from ..frontend.context import Emitter, emitting, error, Value
from ..frontend.func import (Func, Template, _BoundFunc, bind_arguments, func,  # noqa: F401
                             template)  # (ti.func, ti.template: re-exported for vkdiff/__init__)
from ..frontend.lvalues import FieldElem
from ..lang import state
from . import timing
from ..lang.ndarray import Ndarray, NdarrayType
from .ndarray_args import resolve as resolve_array
from ..lang.matrix import Matrix
from ..lang.field import Field
from ..frontend.argarray import ArgArray
from ..frontend.texture import TextureArg
from ..lang.texture import TextureType, format_info
from .ndarray_args import resolve, check_not_template
from ..frontend.struct import StructReturn, StructType


class KernelIR:
    """What the frontend builds for one instantiation: the body and the argument layout."""

    def __init__(self, name):
        self.name = name
        self.body = ir.Block()
        self.arg_types = []      # dtype of each scalar (run-time) argument, in order
        self.arg_names = []      # and its parameter name
        self.arg_arrays = []     # the Buffer (role 'arg') of each ndarray parameter, in order
        self.ret_type = None
        self.ret_field = None

    def set_return(self, value):
        if self.ret_type is None:
            raise error('A kernel with a return value must be annotated with a return type, '
                        'e.g. def func() -> ti.f32', TaichiSyntaxError)
        if T.is_tensor_type(self.ret_type):
            return self._set_tensor_return(value)
        if isinstance(self.ret_type, StructType):
            if self.ret_field is None:
                self.ret_field = StructReturn(self.ret_type, f'{self.name}.return')
            return self.ret_field.store(value)
        value = ops.cast(value, self.ret_type)
        if self.ret_type is T.u1:  # returned as 0 / 1, as Taichi does
            value = ops.cast(value, T.i32)
        if self.ret_field is None:
            self.ret_field = Field(T.i32 if self.ret_type is T.u1 else self.ret_type, (),
                                   name=f'{self.name}.return')
        FieldElem(self.ret_field, []).store(value)


    def _set_tensor_return(self, value):
        """`-> ti.types.vector(3, ti.f32)` (or a matrix type): the entries go to a 0-D vector or
        matrix field, read back as a Vector / Matrix."""
        rt = self.ret_type
        shape = (rt.n,) if not hasattr(rt, 'm') else (rt.n, rt.m)
        n = rt.n * getattr(rt, 'm', 1)
        if not isinstance(value, Matrix) or len(value.entries) != n:
            raise error(f'this kernel returns {rt!r}; got {value!r}')
        dt = T.resolve(rt.dtype) if rt.dtype is not T.u1 else T.u1
        store = T.i32 if dt is T.u1 else dt  # u1 entries are returned as 0 / 1 (no bool buffers)
        if self.ret_field is None:
            self.ret_field = Field(store, (), shape, name=f'{self.name}.return')
        for k, e in enumerate(value.entries):
            FieldElem(self.ret_field, [], comp=k).store(ops.cast(ops.cast(e, dt), store))


def _at_def(fn, message, exc_type=CompileError):
    """A CompileError located at the `def` line of a kernel or func."""
    try:
        lines, first = inspect.getsourcelines(fn)
        k = next(i for i, l in enumerate(lines) if l.lstrip().startswith('def '))
        loc = SourceLocation(inspect.getsourcefile(fn), first + k, lines[k], fn.__name__)
    except (OSError, TypeError, StopIteration):
        loc = None
    return located(exc_type, message, loc)


def _template_key(a):
    """Cache key of a template argument: numbers and strings by value, tuples by their items (as
    Taichi: a new tuple of the same fields is the same kernel), anything else (fields, objects)
    by identity (Kernel.instance keeps the first arguments alive, so their ids stay theirs)."""
    if isinstance(a, (bool, int, float, str, type(None))):
        return ('v', type(a).__name__, a)
    if type(a) is tuple:
        return ('tuple',) + tuple(_template_key(x) for x in a)
    return ('t', id(a))


class LaunchArgs(list):
    """The run-time scalar arguments of a launch (push constants: the hidden shapes of ndarray
    parameters included), and `arrays`: the arrays bound to its ndarray parameters, in order
    (launch.ndarray_args.Bound)."""
    arrays = ()


def _annotation_kind(ann, value):
    """'template', an NdarrayType, or the DataType of a scalar argument."""
    if getattr(ann, '_vkdiff_argpack', False) or getattr(ann, '_vkdiff_struct_arg', False):
        return ann  # an argpack / a struct: its leaves are run-time arguments (launch/argpack.py)
    if isinstance(ann, Template) or ann is Template:
        return 'template'
    if isinstance(ann, (NdarrayType, TextureType)):
        return ann
    if ann is inspect.Parameter.empty:
        if isinstance(value, (bool, int, float)) or hasattr(value, 'dtype') and ops.is_number(value):
            return T.literal_type(ops._py(value))
        if isinstance(value, Ndarray):
            return NdarrayType()
        return 'template'
    if isinstance(ann, str):
        raise CompileError(f'string annotations are not supported ({ann!r})')
    if T.is_tensor_type(ann):
        return ann  # a vector / matrix argument: passed as its entries (see _tensor_entries)
    if ann is T.u1:
        return T.i32  # a ti.u1 argument is passed as 0 / 1
    if isinstance(ann, T.DataType) and ann.is_narrow:
        return ann.reg  # 8/16-bit arguments are passed in 32 bits
    try:
        return T.resolve(ann)
    except TypeError:
        raise CompileError(f'unsupported kernel argument annotation {ann!r} '
                           '(use ti.f32, ti.i32, ti.f64, float, int or ti.template())') from None


def _tensor_shape(tt):
    return (tt.n, tt.m) if hasattr(tt, 'm') else (tt.n,)


def _tensor_entries(tt, value, name):
    """The entries of a vector / matrix kernel argument, in row-major order."""
    import numpy as np
    shape = _tensor_shape(tt)
    arr = np.asarray(value.to_list() if hasattr(value, 'to_list') else value)
    if arr.size != int(np.prod(shape)) or arr.dtype.kind not in 'biuf':
        raise VkdiffError(f'kernel argument {name!r} is a {tt!r}: got {value!r}')
    return arr.reshape(-1).tolist()


def arg_value(em, dt, want, idx):
    """The kernel-side value of run-time argument `idx` (passed as `dt`): an 8/16-bit
    parameter (`want`, passed in 32 bits) is cast to its own type, so arithmetic on it wraps /
    rounds as Taichi's does (a ti.f16 argument 1.1 is 1.0996; a ti.u8 0 minus 1 is 255)."""
    v = em.insert(ir.Stmt('arg', dt, attrs={'index': idx}))
    if isinstance(want, T.DataType) and want.is_narrow:
        v = em.insert(ir.Stmt('cast', want, [v]))
    return Value(v)


def _tensor_arg(kir, em, tt, name):
    """One run-time scalar argument per entry, gathered into a Vector / Matrix."""
    want = T.resolve(tt.dtype)
    dt = want.reg if want.is_narrow else want
    shape = _tensor_shape(tt)
    vals = []
    for k in range(shape[0] * (shape[1] if len(shape) > 1 else 1)):
        idx = len(kir.arg_types)
        kir.arg_types.append(dt)
        kir.arg_names.append(f'{name}[{k}]')
        vals.append(arg_value(em, dt, want, idx))
    if len(shape) == 1:
        return Matrix._new(vals, shape[0], 1, 1)
    return Matrix._new(vals, shape[0], shape[1], 2)


_TEXELS = NdarrayType(boundary='clamp')  # a texture's texel array (indices clamped)


def _texture_arg(kir, ann, tex, name):
    """A texture parameter: its texel array as an array parameter (frontend/texture.py)."""
    a = _array_arg(kir, _TEXELS, tex._arr, name, TextureArg)
    a.fmt = getattr(ann, 'fmt', None)
    if a.fmt is not None:
        a.channels, a.kind = format_info(a.fmt)
    return a


def _array_arg(kir, ann, value, name, cls=ArgArray):
    """An ndarray parameter: hidden i32 arguments for its shape, and its Buffer (role 'arg',
    the k-th array of the launch: meta['param'])."""
    _, bound = resolve(ann, value, name)
    dims = []
    for k in range(len(bound.shape)):
        dims.append(len(kir.arg_types))
        kir.arg_types.append(T.i32)
        kir.arg_names.append(f'{name}.shape[{k}]')
    a = cls(name, bound.dtype, len(bound.shape), bound.elem_shape, dims, ann.boundary)
    a.buffer.meta['param'] = len(kir.arg_arrays)
    if bound.has_grad and ann.needs_grad is not False:  # (part of the compile key) the adjoint
        # accumulates into its gradient
        a.buffer.derive('grad')
    kir.arg_arrays.append(a.buffer)
    return a


def _static_kind(ann):
    try:
        return _annotation_kind(ann, None)
    except CompileError as e:
        return e


def _bind(sig, args, kwargs):
    """All the arguments of a kernel call, in order: keywords and default values filled in."""
    if not kwargs and len(args) == len(sig.parameters):
        return args
    return bind_arguments(sig, args, kwargs, KernelArgumentCountError)


class Kernel:
    def __init__(self, fn, is_grad=False, primal=None):
        self.fn = fn
        self.sig = inspect.signature(fn)
        self.params = list(self.sig.parameters.values())
        self.instances = {}
        self._template_refs = []
        self._generation = -1
        functools.update_wrapper(self, fn)
        self._vkdiff_kernel = True
        self.grad = AdjointKernel(self)

    def _key(self, args):
        if len(args) != len(self.params):
            raise KernelArgumentCountError(f'kernel {self.fn.__name__} takes '
                                           f'{len(self.params)} arguments, got {len(args)}')
        kinds = self.__dict__.get('_kinds')
        if kinds is None:  # explicit annotations resolve once (a launch is on the hot path)
            kinds = self._kinds = [None if p.annotation is inspect.Parameter.empty else
                                   _static_kind(p.annotation) for p in self.params]
        key, runtime_args = [], LaunchArgs()
        for p, a, kind in zip(self.params, args, kinds):
            try:
                if kind is None:
                    kind = _annotation_kind(p.annotation, a)
                elif isinstance(kind, CompileError):
                    raise kind
            except CompileError as e:
                raise _at_def(self.fn, f'argument {p.name!r}: {e}') from None
            if kind == 'template':
                if getattr(p.annotation, 'matches', None) is not None and \
                        not p.annotation.matches(a):  # a ti.types.struct parameter
                    raise TaichiRuntimeTypeError(f'Argument {type(a)} cannot be converted into '
                                                 f'required type {p.annotation!r} (parameter '
                                                 f'{p.name!r}: {a!r})')
                if isinstance(a, Ndarray) and p.annotation is not inspect.Parameter.empty:
                    check_not_template(a, p.name)
                key.append(_template_key(a))
            elif isinstance(kind, (NdarrayType, TextureType)):
                if isinstance(kind, TextureType):  # a texture: its texel array (lang/texture.py)
                    kind.check(a, p.name)
                    k, bound = resolve_array(_TEXELS, a._arr, p.name)
                    k = ('tex', getattr(kind, 'fmt', None), k)
                else:
                    k, bound = resolve_array(kind, a, p.name)
                key.append(k)
                runtime_args.extend(bound.shape)
                if runtime_args.arrays:
                    runtime_args.arrays.append(bound)
                else:
                    runtime_args.arrays = [bound]
            elif T.is_tensor_type(kind):
                key.append(('v', repr(kind)))
                runtime_args.extend(_tensor_entries(kind, a, p.name))
            elif getattr(kind, '_vkdiff_argpack', False):  # launch/argpack.py
                key.append(('p', id(kind)))
                kind.flatten(a, p.name, key, runtime_args)
            elif getattr(kind, '_vkdiff_struct_arg', False):
                # cycle: argpack.py imports this module
                from .argpack import _struct_leaves
                key.append(('p', id(kind)))
                _struct_leaves(kind, a, runtime_args)
            else:
                key.append(('s', kind.name))
                runtime_args.append(a)
        return tuple(key), runtime_args

    def instance(self, args):
        if self._generation != (state.generation, state.kernel_epoch):
            self.instances.clear()
            self._template_refs = []
            self._generation = (state.generation, state.kernel_epoch)
        key, runtime_args = self._key(args)
        inst = self.instances.get(key)
        if inst is None:
            self._template_refs.append(args)  # keeps template objects alive: their ids stay theirs
            # deferred: the compiler loads on the first compile
            from .compiled import CompiledKernel
            inst = self.instances[key] = CompiledKernel(self, self.build_ir(args))
            state.compiled_kernels += 1
        return inst, runtime_args

    def build_ir(self, args):
        kir = KernelIR(self.fn.__name__)
        ret = self.sig.return_annotation
        if ret is not inspect.Signature.empty and ret is not None:
            if getattr(ret, '_vkdiff_argpack', False):
                raise _at_def(self.fn, 'The return type is not supported now! (an argpack is '
                              'only a kernel parameter)', TaichiSyntaxError)
            kir.ret_type = ret if T.is_tensor_type(ret) or isinstance(ret, StructType) else \
                T.resolve(ret)
        em = Emitter(debug=state.config['debug'], check_bounds=state.bounds_checked())
        em.kernel_ir = kir
        with emitting(em), em.open(kir.body):
            fb = FunctionBuilder(self.fn, kir, is_kernel=True)
            fb.kernel_args = {p.name for p in self.params}
            for p, a in zip(self.params, args):
                kind = _annotation_kind(p.annotation, a)
                if kind == 'template':
                    fb.scopes[0][p.name] = a
                elif isinstance(kind, NdarrayType):
                    fb.scopes[0][p.name] = _array_arg(kir, kind, a, p.name)
                elif isinstance(kind, TextureType):
                    fb.scopes[0][p.name] = _texture_arg(kir, kind, a, p.name)
                elif T.is_tensor_type(kind):
                    fb.scopes[0][p.name] = _tensor_arg(kir, em, kind, p.name)
                elif getattr(kind, '_vkdiff_argpack', False):
                    fb.scopes[0][p.name] = kind.declare(kir, em, a, p.name)
                elif getattr(kind, '_vkdiff_struct_arg', False):
                    # cycle: argpack.py imports this module
                    from .argpack import _struct_arg
                    fb.scopes[0][p.name] = _struct_arg(kir, em, kind, p.name)
                else:
                    idx = len(kir.arg_types)
                    kir.arg_types.append(kind)
                    kir.arg_names.append(p.name)
                    fb.scopes[0][p.name] = arg_value(em, kind, p.annotation, idx)
            fb.build_body(fb.fdef.body)
            if kir.ret_type is not None and not fb.returned:
                raise located(TaichiSyntaxError, 'Kernel has a return type but does not have a '
                              'return statement', em.loc)
        return kir

    @state.synchronized
    def __call__(self, *args, **kwargs):
        args = _bind(self.sig, args, kwargs)
        tape = state.tape
        replay = start = None
        if tape is not None and state.launch_watch is None:
            replay = tape.replaying  # launch/replay.py: a captured Tape repeats
            if replay is not None:
                if replay.call(self, args):
                    return None
                start = replay.begin()
        inst, rargs = self.instance(args)
        if state.launch_watch is not None:  # ti.ad.checkpointed's recorder (ad/checkpoint.py)
            state.launch_watch(self, inst, rargs)
        if tape is not None and hasattr(tape, 'before_launch'):
            tape.before_launch(self, inst, rargs)  # ad/tape_undo.py: undo frames
        t0 = timing.begin()
        if state.fwd is not None:  # inside a Tape too: the tangent kernel computes the primal
            result = state.fwd.launch(self, inst, args, rargs)
        else:
            result = inst.launch(rargs)
        timing.end(self.fn.__name__, t0)
        if tape is not None:
            tape.record(self, args)
            if start is not None:
                replay.captured_call(self, args, start)
        return result

    def __get__(self, obj, objtype=None):
        """A kernel defined in a class (`@ti.data_oriented`): `self` is its first, template
        argument."""
        return self if obj is None else _BoundKernel(self, obj)

    @state.synchronized
    def ir(self, *args, after=None):
        """The IR of this kernel's tasks for the given arguments, as text: as split into tasks,
        or after the pass `after` (a name in vkdiff.compiler.PASSES: 'adjoint' and 'tangent'
        give this kernel's adjoint and tangent, 'lower' etc. its tasks further down the
        pipeline, 'codegen' their SPIR-V assembly)."""
        inst, _ = self.instance(args)
        return _ir_after(inst, inst, after)

    @state.synchronized
    def spirv(self, *args):
        inst, _ = self.instance(args)
        return inst.spirv()


class AdjointKernel:
    """`kernel.grad(*args)`: runs the generated adjoint (reverse-mode) kernel."""

    def __init__(self, primal):
        self.primal = primal

    @state.synchronized
    def __call__(self, *args, **kwargs):
        args = _bind(self.primal.sig, args, kwargs)
        inst, rargs = self.primal.instance(args)
        adjoint = inst.adjoint()
        t0 = timing.begin()
        result = adjoint.launch(rargs)
        timing.end(self.primal.fn.__name__ + '.grad', t0)
        if adjoint.overflow_flags:
            # deferred: the compiler loads on the first compile
            from .compiled import check_overflow
            check_overflow(adjoint)
        return result

    @state.synchronized
    def ir(self, *args, after=None):
        """The adjoint's IR (see Kernel.ir; 'split_tasks' gives the primal's tasks)."""
        inst, _ = self.primal.instance(args)
        return _ir_after(inst, inst.adjoint(), after)

    @state.synchronized
    def spirv(self, *args):
        inst, _ = self.primal.instance(args)
        return inst.adjoint().spirv()


def _ir_after(inst, tasklist, after):
    """The text of `tasklist` (a compiled kernel `inst` or its adjoint) after the pass `after`."""
    if after is None:
        return tasklist.ir()
    # deferred: the compiler loads on the first compile
    from ..compiler import check_pass
    check_pass(after)
    if after == 'split_tasks':
        return inst.ir()
    if after == 'adjoint':
        return inst.adjoint().ir()
    if after == 'tangent':
        return tasklist.tangent().ir()
    return tasklist.ir(after)


class _BoundKernel:
    """A kernel (or its adjoint) looked up on an instance: called with the instance first."""

    def __init__(self, target, obj):
        self._target, self._obj = target, obj
        self._vkdiff_kernel = True
        functools.update_wrapper(self, target.fn if isinstance(target, Kernel) else target.primal.fn)

    def __call__(self, *args, **kwargs):
        return self._target(self._obj, *args, **kwargs)

    @property
    def grad(self):
        return _BoundKernel(self._target.grad, self._obj)

    def ir(self, *args, after=None):
        return self._target.ir(self._obj, *args, after=after)

    def spirv(self, *args):
        return self._target.spirv(self._obj, *args)


def data_oriented(cls):
    """`@ti.data_oriented`: accepted for Taichi compatibility; kernels and funcs defined in any
    class already bind `self` as a template argument."""
    return cls


def kernel(fn):
    return Kernel(fn)
