"""Error bounds of GLSL.std.450 functions in f32 from the Vulkan specification ("Precision and
Operation of SPIR-V Instructions"): what any conformant driver may return, where a test compares
a kernel's result with numpy. Lavapipe is far more exact; SwiftShader's sin/cos are ~2e-4 off."""
import numpy as np

# Sin, Cos: absolute error at most 2**-11 for arguments in [-pi, pi] (unbounded outside)
SIN_COS_ABS = 2.0 ** -11


def exp_ulp(x):
    """Exp, Exp2: 3 + 2|x| ulp (of the result)."""
    return 3 + 2 * np.abs(x)


def ulp32(v):
    """The f32 spacing at |v|."""
    return np.spacing(np.abs(np.asarray(v, np.float64)).astype(np.float32)).astype(np.float64)
