"""Exception types of every stage. Kernel-code errors carry the user's file, line and source text."""


class VkdiffError(Exception):
    """Base class of all vkdiff errors."""


class CompileError(VkdiffError):
    """A kernel or func cannot be compiled: unsupported construct, type error, missing device feature."""


class TaichiRuntimeError(VkdiffError, RuntimeError):
    """Taichi's name: a program cannot be executed (a RuntimeError)."""


class AutodiffError(TaichiRuntimeError):
    """A gradient cannot be generated correctly, or autodiff is used wrongly (a RuntimeError, as
    Taichi raises for these: a nested Tape, grad_for on a function that is not grad_replaced)."""


class AutodiffArgumentError(AutodiffError, ValueError):
    """A Tape / gradient call given a loss it cannot differentiate (not 0-D, no gradient)."""


class RuntimeError_(TaichiRuntimeError):
    """The Vulkan runtime failed (no device, device lost, missing tools)."""


# ---- Taichi's exception names (taichi/lang/exception.py, same built-in bases), vkdiff's own
TaichiCompilationError = CompileError


class TaichiSyntaxError(CompileError, SyntaxError):
    """A kernel is written wrongly (also: a kernel called with the wrong number of arguments)."""


class TaichiNameError(CompileError, NameError):
    """An undefined name in a kernel."""


class TaichiIndexError(CompileError, IndexError):
    """A wrong index in a kernel, found at compile time."""


class TaichiTypeError(CompileError, TypeError):
    """A type mismatch in a kernel, found at compile time."""


class TaichiAssertionError(TaichiRuntimeError, AssertionError):
    """An assertion failed at run time."""


class AccessRuleError(AutodiffError, TaichiAssertionError):
    """A global data access rule is broken (a launch overwrites what its adjoint replays); Taichi's
    checker raises TaichiAssertionError for it."""


class CheckpointError(AutodiffError):
    """A checkpointed block (ti.ad.checkpointed) cannot recompute its steps exactly: state that
    its replay would not reproduce changed (a field written from Python scope inside the step, a
    field the steps read changed before the backward pass, ti.random in a step, ...)."""


class CheckpointBudgetError(CheckpointError, MemoryError):
    """ti.ad.checkpointed(budget_bytes=...) is smaller than the least memory its snapshots need."""


class TaichiRuntimeTypeError(TaichiRuntimeError, TypeError):
    """A value of the wrong type given to a compiled kernel."""


# ---- Python-scope bad input (each also the built-in a user catches)
class KernelArgumentError(TaichiRuntimeTypeError):
    """A kernel argument of the wrong type (None, str, complex, a float for an integer)."""


class KernelArgumentCountError(TaichiSyntaxError, TypeError):
    """A kernel called with missing or extra arguments (Taichi: TaichiSyntaxError)."""


class VkdiffTypeError(VkdiffError, TypeError):
    """A Python-scope value, dtype or shape of the wrong type."""


class DataTypeError(VkdiffTypeError, ValueError):
    """Something that is no vkdiff dtype (`ti.field('i8')`, `ti.field(None)`; Taichi: ValueError)."""


class VkdiffValueError(VkdiffError, ValueError):
    """A Python-scope value of the right type but a wrong shape or value."""


class FieldOffsetError(CompileError, ValueError):
    """A field's `offset=` does not fit its shape (Taichi's TaichiCompilationError)."""


class FieldOrderError(CompileError, ValueError):
    """A field's `order=` does not name each axis of its shape once (Taichi's
    TaichiCompilationError)."""


class FieldShapeError(TaichiRuntimeError, VkdiffValueError):
    """A field shape with a zero or negative dimension (Taichi: TaichiRuntimeError; also a
    ValueError)."""


class VkdiffOverflowError(VkdiffValueError, OverflowError):
    """A number that does not fit the field's or argument's type (2**40 into i32, -1 into u32)."""


class VkdiffIndexError(VkdiffError, IndexError):
    """A field index out of range."""


class FieldIndexError(VkdiffIndexError, AssertionError):
    """A Python-scope field index out of range (also an AssertionError: Taichi's debug mode
    raises one for it)."""


class WarpWidthWarning(UserWarning):
    """ti.simt.warp on a device whose subgroups are narrower than CUDA's 32-lane warps: a warp
    is the subgroup there (lang/simt/warp.py)."""


class FieldAliasWarning(UserWarning):
    """A Python-scope field index out of range on an axis whose address in Taichi's layout is
    another element of the same field: it reads and writes that element, as Taichi does
    (lang/layout.py). Warned once per field; with ti.init(debug=True) it is a FieldIndexError."""


class KernelIndexError(TaichiAssertionError, VkdiffIndexError):
    """ti.init(debug=True): a kernel indexed a field or ndarray out of range (raised at the end of
    the launch; the access was skipped). Also Taichi's TaichiAssertionError (an AssertionError and
    RuntimeError, what Taichi's debug mode raises) and an IndexError."""


class KernelZeroDivisionError(TaichiAssertionError, ZeroDivisionError):
    """ti.init(debug=True): an integer `//` or `%` by zero in a kernel (raised at the end of the
    launch; the result was vkdiff's 0 as without debug)."""


class KernelValueError(TaichiAssertionError, VkdiffValueError):
    """ti.init(debug=True) or check_out_of_bound=True: a kernel computed `int ** int` with a
    negative exponent (Taichi's check; numpy raises ValueError for it). Raised at the end of the
    launch; the result was base ** |exponent| as without the check."""


class IndexCountError(VkdiffIndexError, AssertionError):
    """A field indexed with the wrong number of indices (Taichi raises AssertionError)."""


class IndexTypeError(VkdiffIndexError, TypeError):
    """A field index that is not an integer (a float, bool, slice, str; Taichi: TypeError)."""


class UnsupportedError(TaichiRuntimeError, NotImplementedError):
    """A Taichi feature vkdiff does not have (graph textures, image formats other than PNG/BMP without
    pillow, a gradient placed under other sparse nodes than its primal, ...)."""


class OutOfMemoryError(VkdiffError, MemoryError):
    """A field's device memory cannot be allocated (the driver refused it, or the heap's budget
    would be exceeded); the fields allocated before are intact."""


class DynamicPoolError(OutOfMemoryError):
    """The chunk pool of a dynamic SNode (lang/dynpool.py) is full: what the launch wrote past
    it was dropped. Raised at the sync after the launch; ti.init(device_memory_GB=) gives more."""


class SparsePoolError(OutOfMemoryError):
    """The block pool of a pointer SNode (lang/blockpool.py) is full: what the launch wrote into
    new blocks was dropped. Raised at the sync after the launch; ti.init(device_memory_GB=) or
    freeing blocks (ti.deactivate, deactivate_all) gives room."""


class WatchdogTimeout(VkdiffError, TimeoutError):
    """Work submitted to the device (the kernels launched since the last sync) has not finished
    within the watchdog's limit (ti.init(watchdog=seconds), VKDIFF_WATCHDOG; default 60 s, 0 =
    no limit), instead of a hang. The work stays submitted: the next sync waits for it again.
    `kernels`: the names of the kernels in flight."""

    def __init__(self, message, kernels=()):
        super().__init__(message)
        self.kernels = tuple(kernels)


class SourceLocation:
    """Where a statement came from in the user's code. `excerpt`, when known, is the source as
    Taichi prints it: each line of the node, each followed by a line of ^ under the node; the
    frontend passes a function that makes it, so only locations that end up in a message pay for
    the formatting (it took a fifth of the frontend's time)."""

    __slots__ = ('file', 'line', 'text', 'func', '_excerpt')

    def __init__(self, file, line, text, func='', excerpt=None):
        self.file, self.line, self.text, self.func = file, line, text, func
        self._excerpt = excerpt  # or a function making it, called when first needed

    @property
    def excerpt(self):
        e = self._excerpt
        if callable(e):
            try:
                e = e()
            except (AttributeError, IndexError, TypeError):
                e = None
            self._excerpt = e
        return e

    def __str__(self):
        where = f'File "{self.file}", line {self.line}'
        if self.func:
            where += f', in {self.func}'
        if self.excerpt:
            return f'{where}:\n{self.excerpt.rstrip(chr(10))}'
        return where + (f':\n    {self.text.strip()}' if self.text else '')


def located(exc_type, message, loc):
    """Build an exception whose message starts with the source location, in Taichi's layout:
    a newline, `File "...", line N, in f:`, the source line(s) with ^ under the node, the message."""
    if loc is None:
        return exc_type(message)
    return exc_type(f'\n{loc}\n{message}')


def with_call_site(exc, loc):
    """The same error raised inside an inlined ti.func, its message prefixed with the call site
    (Taichi shows the chain kernel -> func -> func, outermost first)."""
    msg = exc.args[0] if exc.args and isinstance(exc.args[0], str) else None
    if loc is None or msg is None or not msg.startswith('\nFile "'):
        return exc
    try:
        new = type(exc)(f'\n{loc}{msg}')
    except Exception:  # an exception type with another constructor: keep it as it is
        return exc
    new.__dict__.update(exc.__dict__)
    return new


class LoopLimitError(VkdiffError, RuntimeError):
    """A loop in a kernel was ended early by the driver's loop limiter (lavapipe: 65,535 loop
    iterations per shader invocation); raised at the next sync instead of a truncated result."""
