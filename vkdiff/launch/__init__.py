"""The launch floor (issue 28): kernel call and launch. `@ti.kernel` (kernel.py) binds the call's
arguments (ndarray_args.py, argpack.py), has the frontend build the IR and the compiler core
compile it (compiled.py), binds buffers per launch (arg_binding.py) and reads the runtime's
status storages back (status.py: prints, debug checks, the loop limiter). builtin_kernels.py
holds the kernels the data floor launches from Python scope (fill, copy, zeroing gradients).

It sits above the data floor (lang/) and the frontend (frontend/) and below the face (lang/api.py,
ad/, linalg/, ...): nothing below imports it; data objects reach it through hooks it registers."""
