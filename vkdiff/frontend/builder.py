"""Frontend floor: walks the Python AST of a `@kernel` / `@func` and emits IR.

Expressions are evaluated as they are walked: on compile-time values (numbers, fields, modules,
`ti.static(...)`) Python computes the result; on run-time Values the ops module emits IR. One
`build_<Node>` per AST node type -- expressions in frontend/expressions.py, statements in
frontend/statements.py (loops: frontend/loops.py) -- dispatched from here; anything else raises
CompileError at the user's line."""
import ast
import builtins
import inspect
import textwrap

from ..errors import (CompileError, SourceLocation, TaichiNameError, TaichiSyntaxError, VkdiffError,
                      located)
from .compiletime import _LoopCtl
from .context import current, error
from .expressions import ExpressionBuilder
from .statements import StatementBuilder, _structure_returns


def parse_function(fn):
    """The function's AST, with its file and first line for error messages, its source lines as
    written (tabs expanded to 4 columns, as Taichi reads them) and the indentation removed."""
    try:
        raw = [textwrap.fill(line, tabsize=4, width=9999) for line in inspect.getsourcelines(fn)[0]]
        src = textwrap.dedent('\n'.join(raw))
        file = inspect.getsourcefile(fn)
    except (OSError, TypeError) as e:
        raise CompileError(f'cannot read the source of {fn.__qualname__}: {e}') from None
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise CompileError(f'{fn.__qualname__} is not a plain function definition')
    lines = src.splitlines()
    indent = len(raw[0]) - len(lines[0]) if raw and lines else 0
    return fdef, file, fn.__code__.co_firstlineno - 1, lines, raw, indent


def source_excerpt(raw, node, indent):
    """The node's source lines as written, each followed by ^ under the node (Taichi's
    get_pos_info: long lines wrapped at 80 columns; a for/while/if/def shows its header only)."""
    wrapper = textwrap.TextWrapper(width=80)

    def gen_line(code, hint):
        hint += ' ' * (len(code) - len(hint))
        code, hint = wrapper.wrap(code), wrapper.wrap(hint)
        if not code:
            return '\n\n'
        return ''.join(c + '\n' + h + '\n' for c, h in zip(code, hint))

    col, end_col = indent + node.col_offset, indent + (node.end_col_offset or node.col_offset)
    if node.lineno == node.end_lineno:
        return gen_line(raw[node.lineno - 1], ' ' * col + '^' * (end_col - col))
    end = node.end_lineno
    if isinstance(node, (ast.For, ast.While, ast.FunctionDef, ast.If)):
        end = max(node.body[0].lineno - 1, node.lineno)
    out = ''
    for i in range(node.lineno - 1, end):
        line = raw[i]
        last = len(line.rstrip())
        first = len(line) - len(line.lstrip())
        if i == node.lineno - 1:
            hint = ' ' * col + '^' * (last - col)
        elif i == node.end_lineno - 1:
            hint = ' ' * first + '^' * (end_col - first)
        else:
            hint = ' ' * first + '^' * (last - first) if first < last else ''
        out += gen_line(line, hint)
    return out


def function_scope(fn):
    """Globals and closure variables visible to the function body."""
    names = dict(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                names[name] = cell.cell_contents
            except ValueError:
                pass
    return names


class FunctionBuilder(ExpressionBuilder, StatementBuilder):
    """Builds one function body (a kernel, or an inlined func) into the current emitter."""

    def __init__(self, fn, kernel, is_kernel):
        self.fn = fn
        self.kernel = kernel  # the KernelBuilder state: args, return
        self.is_kernel = is_kernel
        self.fdef, self.file, self.line0, self.lines, self.raw_lines, self.indent = \
            parse_function(fn)
        if not is_kernel:
            self.fdef.body = _structure_returns(self.fdef.body)
        self.returned = False    # a kernel's top-level return was built: the rest is dead
        self.globals = function_scope(fn)
        self.scopes = [{}]
        self.loop_depth = 0      # serial loops enclosing the current statement
        self.static_depth = 0
        self.static_scope = 0    # > 0 inside the arguments of ti.static(...) / comprehensions
        self.kernel_args = set()  # a kernel's parameter names: Taichi makes them immutable
        self.in_parfor = False
        self.folded_if = 0       # inside non-static ifs folded at compile time
        self.loops = []          # enclosing loops, innermost last: 'serial', 'parallel', or
        #                          ('static', emitter block depth at the unrolled body)
        self.result = None       # (lvalue) for funcs that return from inside branches
        self.top_block = None    # the block a func is inlined into, and where it starts
        self.top_index = 0

    # ---------------------------------------------------------------- scopes
    def lookup(self, name):
        for sc in reversed(self.scopes):
            if name in sc:
                return sc[name]
        if name in self.globals:
            return self.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise error(f'Name "{name}" is not defined', TaichiNameError)

    def bind(self, name, value):
        for sc in reversed(self.scopes):
            if name in sc:
                sc[name] = value
                return
        self.scopes[-1][name] = value

    # ---------------------------------------------------------------- dispatch
    def loc(self, node):
        line = getattr(node, 'lineno', None)
        if line is None:
            return current().loc
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ''
        raw, indent = self.raw_lines, self.indent
        return SourceLocation(self.file, line + self.line0, text, self.fn.__name__,
                              lambda: source_excerpt(raw, node, indent))

    def __call__(self, node):
        em = current()
        saved = em.loc
        em.loc = self.loc(node)
        try:
            method = getattr(self, 'build_' + type(node).__name__, None)
            if method is None:
                raise error(f'Unsupported node "{type(node).__name__}" (not supported in '
                            'vkdiff kernels)', TaichiSyntaxError)
            return method(node)
        except (VkdiffError, _LoopCtl):
            raise
        except RecursionError:
            raise located(CompileError, 'recursion too deep while inlining: a ti.func that calls '
                          'itself must stop on compile-time values', em.loc) from None
        except (TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError,
                NotImplementedError, ArithmeticError) as e:
            raise located(CompileError, f'{type(e).__name__}: {e}', em.loc) from None
        finally:
            em.loc = saved

    def build_body(self, stmts):
        for s in stmts:
            if self.returned:
                return
            self(s)
