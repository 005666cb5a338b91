"""Exception types of every stage. Kernel-code errors carry the user's file, line and source text."""


class VkdiffError(Exception):
    """Base class of all vkdiff errors."""


class CompileError(VkdiffError):
    """A kernel or func cannot be compiled: unsupported construct, type error, missing device feature."""


class AutodiffError(VkdiffError):
    """A gradient cannot be generated correctly (e.g. a global data access rule is broken)."""


class RuntimeError_(VkdiffError):
    """The Vulkan runtime failed (no device, device lost, missing tools)."""


class OutOfMemoryError(VkdiffError, MemoryError):
    """A field's device memory cannot be allocated (the driver refused it, or the heap's budget
    would be exceeded); the fields allocated before are intact."""


class SourceLocation:
    """Where a statement came from in the user's code."""

    __slots__ = ('file', 'line', 'text', 'func')

    def __init__(self, file, line, text, func=''):
        self.file, self.line, self.text, self.func = file, line, text, func

    def __str__(self):
        where = f'File "{self.file}", line {self.line}'
        if self.func:
            where += f', in {self.func}'
        return where + (f':\n    {self.text.strip()}' if self.text else '')


def located(exc_type, message, loc):
    """Build an exception whose message starts with the source location."""
    if loc is None:
        return exc_type(message)
    return exc_type(f'{loc}\n{message}')
