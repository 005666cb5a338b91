"""Face floor: `ti.examples.patterns.taichi_logo(pos, scale)`: Taichi's logo as a ti.func, 1 inside
the black half of the yin-yang at `pos` (a 2-vector in [0, 1]^2) and 0 elsewhere (Taichi 1.7.4's
python/taichi/examples/patterns.py, written out here)."""
from ..frontend.func import func, template
from ..lang.matrix import Vector


@func
def taichi_logo(pos: template(), scale: float = 1 / 1.11):
    p = (pos - 0.5) / scale + 0.5
    ret = -1
    if not (p - 0.50).norm_sqr() <= 0.52**2:
        if ret == -1:
            ret = 0
    if not (p - 0.50).norm_sqr() <= 0.495**2:
        if ret == -1:
            ret = 1
    if (p - Vector([0.50, 0.25])).norm_sqr() <= 0.08**2:
        if ret == -1:
            ret = 1
    if (p - Vector([0.50, 0.75])).norm_sqr() <= 0.08**2:
        if ret == -1:
            ret = 0
    if (p - Vector([0.50, 0.25])).norm_sqr() <= 0.25**2:
        if ret == -1:
            ret = 0
    if (p - Vector([0.50, 0.75])).norm_sqr() <= 0.25**2:
        if ret == -1:
            ret = 1
    if p[0] < 0.5:
        if ret == -1:
            ret = 1
    else:
        if ret == -1:
            ret = 0
    return 1 - ret
