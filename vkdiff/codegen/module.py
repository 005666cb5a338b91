"""Codegen stage: a SPIR-V module builder that owns the module's sections (in the order of the
SPIR-V spec, section 2.4) and deduplicates ids for types and constants. Emits assembly text for
spirv-as. Source locations become OpString (the file) + OpLine (the line), so drivers, layers and
SPIR-V tools can point at the user's line."""
import numpy as np

from .. import types as T

LOCAL_SIZE = 128  # invocations per workgroup of a parallel task


class Module:
    def __init__(self):
        self.capabilities = ['Shader']
        self.extensions = []
        self.entry = []
        self.modes = []
        self.strings = []      # OpString: the source files named by OpLine
        self.at_line = None    # the OpLine in force in the current block
        self.names = []
        self.decorations = []
        self.globals = []      # types, constants, global variables (in dependency order)
        self.functions = []
        self._ids = 0
        self._cache = {}
        self.glsl = '%glsl'

    # ------------------------------------------------------------ ids
    def new(self, hint='t'):
        self._ids += 1
        return f'%{hint}{self._ids}'

    def capability(self, cap):
        if cap not in self.capabilities:
            self.capabilities.append(cap)

    def extension(self, ext):
        if ext not in self.extensions:
            self.extensions.append(ext)

    def _cached(self, key, make):
        v = self._cache.get(key)
        if v is None:
            v = self._cache[key] = make()
        return v

    def _global(self, hint, text):
        i = self.new(hint)
        self.globals.append(f'{i} = {text}')
        return i

    # ------------------------------------------------------------ debug info
    def source_line(self, loc):
        """`OpLine` for a statement's SourceLocation (None: no location)."""
        if loc is None or not getattr(loc, 'file', None) or not loc.line:
            return None
        f = self._cached(('str', loc.file), lambda: self._string(loc.file))
        return f'OpLine {f} {int(loc.line)} 0'

    def line_change(self, loc):
        """[OpLine] where a statement's location differs from the line in force, else []. An
        OpLine holds to the end of its block: `at_line` is reset at each OpLabel."""
        line = self.source_line(loc)
        if line is None or line == self.at_line:
            return []
        self.at_line = line
        return [line]

    def _string(self, text):
        i = self.new('src')
        quoted = text.replace('\\', '\\\\').replace('"', '\\"')
        self.strings.append(f'{i} = OpString "{quoted}"')
        return i

    # ------------------------------------------------------------ types
    def void(self):
        return self._cached('void', lambda: self._global('void', 'OpTypeVoid'))

    def bool(self):
        return self._cached('bool', lambda: self._global('bool', 'OpTypeBool'))

    def scalar(self, dt):
        """The SPIR-V type of a DataType (8/16-bit types: their 32-bit register type)."""
        if dt.is_narrow:
            dt = dt.reg
        if dt.is_bool:
            return self.bool()
        if dt.bits == 64:
            self.capability('Float64' if dt.is_float else 'Int64')
        if dt.is_float:
            return self._cached(('float', dt.bits), lambda: self._global(
                f'f{dt.bits}_', f'OpTypeFloat {dt.bits}'))
        sign = 1 if dt.is_signed else 0
        return self._cached(('int', dt.bits, sign), lambda: self._global(
            f'{"i" if sign else "u"}{dt.bits}_', f'OpTypeInt {dt.bits} {sign}'))

    def vector(self, elem, n):
        return self._cached(('vec', elem, n), lambda: self._global('v', f'OpTypeVector {elem} {n}'))

    def pointer(self, storage, t):
        return self._cached(('ptr', storage, t), lambda: self._global('p', f'OpTypePointer {storage} {t}'))

    def array(self, elem, n):
        return self._cached(('arr', elem, n), lambda: self._global(
            'arr', f'OpTypeArray {elem} {self.u32(n)}'))

    def function_type(self, ret, *params):
        return self._cached(('fn', ret, params), lambda: self._global(
            'fn', ' '.join(['OpTypeFunction', ret, *params])))

    def runtime_array(self, elem, stride):
        def make():
            i = self._global('ra', f'OpTypeRuntimeArray {elem}')
            self.decorations.append(f'OpDecorate {i} ArrayStride {stride}')
            return i
        return self._cached(('rtarr', elem), make)

    def buffer_block(self, elem, stride):
        """`struct { elem data[]; }` decorated as a storage-buffer Block."""
        def make():
            arr = self.runtime_array(elem, stride)
            i = self._global('blk', f'OpTypeStruct {arr}')
            self.decorations.append(f'OpDecorate {i} Block')
            self.decorations.append(f'OpMemberDecorate {i} 0 Offset 0')
            return i
        return self._cached(('block', elem), make)

    # ------------------------------------------------------------ constants
    def const(self, dt, value):
        if dt.is_narrow:  # the value as the narrow type holds it, in the register type
            value = np.array(value).astype(dt.np)[()].item()
            dt = dt.reg
        t = self.scalar(dt)
        if dt.is_bool:
            return self._cached(('cb', bool(value)), lambda: self._global(
                'c', f'OpConstantTrue {t}' if value else f'OpConstantFalse {t}'))
        if dt.is_float:
            v = float(np.float32(value)) if dt.bits == 32 else float(value)
            key = ('cf', dt.bits, v.hex())
            if v != v:
                lit = '0x1.8p+128' if dt.bits == 32 else '0x1.8p+1024'
            elif v in (float('inf'), float('-inf')):
                lit = ('-' if v < 0 else '') + ('0x1p+128' if dt.bits == 32 else '0x1p+1024')
            else:
                lit = v.hex()
            return self._cached(key, lambda: self._global('c', f'OpConstant {t} {lit}'))
        v = int(value)
        if dt.kind == 'u' or dt.is_bool:
            v &= (1 << dt.bits) - 1
        else:
            v = (v + (1 << (dt.bits - 1))) % (1 << dt.bits) - (1 << (dt.bits - 1))
        return self._cached(('ci', dt.name, v), lambda: self._global('c', f'OpConstant {t} {v}'))

    def u32(self, v):
        return self.const(T.u32, v)

    def i32(self, v):
        return self.const(T.i32, v)

    # ------------------------------------------------------------ output
    def text(self):
        out = [f'OpCapability {c}' for c in self.capabilities]
        out += [f'OpExtension "{e}"' for e in self.extensions]
        out.append(f'{self.glsl} = OpExtInstImport "GLSL.std.450"')
        out.append('OpMemoryModel Logical GLSL450')
        out += self.entry + self.modes + self.strings + self.names + self.decorations + self.globals
        out += self.functions
        return '\n'.join(out) + '\n'
