"""Values floor (the lowest API floor, issue 28): the calls a lower floor makes into a higher one
without importing it. The higher floor registers each hook when it is imported
(`@hooks.provides('fill_field')`); the lower one calls `hooks.call('fill_field', ...)`.

    fill_field, copy_field, fill_word, native_runtime   launch/builtin_kernels.py, for the data
                                                        floor's Python-scope Field.fill /
                                                        copy_from and Ndarray.fill
    fill_in_kernel                                      frontend/loops.py, for Field.fill called
                                                        in a kernel (a loop storing the value)
    make_field, matrix_ndarray, vector_ndarray          lang/field.py, lang/ndarray.py, for the
                                                        values floor's Matrix / Vector .field and
                                                        .ndarray, VectorType / MatrixType .field
    make_struct_field                                   frontend/struct_field.py, for
                                                        frontend/struct.py's StructType.field,
                                                        Struct.field and kernel struct results
"""
_hooks = {}


def provides(name):
    """Decorator: register the function as the hook `name`."""
    def register(fn):
        _hooks[name] = fn
        return fn
    return register


def call(name, *args, **kwargs):
    """Call the hook `name` (registered when vkdiff is imported)."""
    try:
        fn = _hooks[name]
    except KeyError:
        raise RuntimeError(f'internal: no hook {name!r} registered (import vkdiff, which '
                           'imports every floor)') from None
    return fn(*args, **kwargs)
