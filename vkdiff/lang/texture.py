"""Data floor: `ti.Texture`, `ti.Format` and the kernel annotations `ti.types.texture` /
`ti.types.rw_texture`, as Taichi 1.7.4 has them.

A texture is buffer-backed: its texels live in a 4-channel f32 ndarray (shape = the texture's
shape, texel (x, y[, z]) at index [x, y[, z]]), not in a Vulkan image, so it does not use the GPU's
texture units (yet). The format's precision is applied where a texel is written (`store` in a
kernel: frontend/texture.py; `from_field` / `from_ndarray` / `from_image` here) as lavapipe's
image stores do it, so as Taichi's values there: unorm formats are clamped to [0, 1] and become
k / 255 (k / 65535) with k the f32 product rounded to even; 16-bit float formats are rounded
toward zero to f16. Channels the format lacks read as (0, 0, 0, 1) as Vulkan's do. Sampling
(frontend/texture.py) is computed in the shader: bilinear, texel centres at (i + 0.5) / n, and
coordinates wrap (repeat addressing) as Taichi's Vulkan sampler does."""
import enum

import numpy as np

from .. import types as T
from ..errors import CompileError, TaichiRuntimeError, UnsupportedError, VkdiffValueError
from .ndarray import Ndarray


class Format(enum.Enum):
    """Taichi 1.7.4's texture formats (`ti.Format`)."""
    r8 = 'r8'
    r8u = 'r8u'
    r8i = 'r8i'
    rg8 = 'rg8'
    rg8u = 'rg8u'
    rg8i = 'rg8i'
    rgba8 = 'rgba8'
    rgba8u = 'rgba8u'
    rgba8i = 'rgba8i'
    r16 = 'r16'
    r16u = 'r16u'
    r16i = 'r16i'
    r16f = 'r16f'
    rg16 = 'rg16'
    rg16u = 'rg16u'
    rg16i = 'rg16i'
    rg16f = 'rg16f'
    rgb16 = 'rgb16'
    rgb16u = 'rgb16u'
    rgb16i = 'rgb16i'
    rgb16f = 'rgb16f'
    rgba16 = 'rgba16'
    rgba16u = 'rgba16u'
    rgba16i = 'rgba16i'
    rgba16f = 'rgba16f'
    r32u = 'r32u'
    r32i = 'r32i'
    r32f = 'r32f'
    rg32u = 'rg32u'
    rg32i = 'rg32i'
    rg32f = 'rg32f'
    rgb32u = 'rgb32u'
    rgb32i = 'rgb32i'
    rgb32f = 'rgb32f'
    rgba32u = 'rgba32u'
    rgba32i = 'rgba32i'
    rgba32f = 'rgba32f'

    def __str__(self):
        return f'Format.{self.value}'


def format_info(fmt):
    """(number of channels, kind) of a format: kind 'unorm8', 'unorm16', 'f16' or 'f32'.
    Integer formats (r8u, r32i, ...) are refused: their texels are integers, which this
    f32-backed texture does not hold."""
    if not isinstance(fmt, Format):
        raise VkdiffValueError(f'expected a ti.Format, got {fmt!r}')
    name = fmt.value
    channels = len(name.rstrip('0123456789uif'))
    bits = int(name[channels:].rstrip('uif'))
    suffix = name[channels + len(str(bits)):]
    if suffix in ('u', 'i'):
        raise UnsupportedError(f'texture format {fmt} (integer texels) is not supported by '
                               'vkdiff: use a unorm (r8, rgba8, r16...) or float (r16f, r32f...) '
                               'format')
    kind = {'': f'unorm{bits}', 'f': f'f{bits}'}[suffix]
    return channels, kind


def quantise_host(values, fmt):
    """`values` (f32, last axis = the format's channels) as the format stores them: the same
    rounding as a kernel's store (frontend/texture.py)."""
    _, kind = format_info(fmt)
    v = np.asarray(values, np.float32)
    if kind.startswith('unorm'):
        top = np.float32(255.0 if kind == 'unorm8' else 65535.0)
        return (np.rint(np.clip(v, 0.0, 1.0) * top) / top).astype(np.float32)  # (even ties)
    if kind == 'f16':  # toward zero; finite values past 65504 become +-65504
        with np.errstate(over='ignore'):
            bits = np.ascontiguousarray(v).view(np.int32) & np.int32(-8192)
            r = bits.view(np.float32).copy()
            a = np.abs(v)
            tiny = a < 2.0 ** -14
            r[tiny] = (np.sign(v) * np.floor(a * np.float32(2 ** 24)) / np.float32(2 ** 24))[tiny]
            big = np.isfinite(v) & (a > 65504.0)
            r[big] = np.sign(v[big]) * 65504.0
        return r
    return v


class Texture:
    """`ti.Texture(fmt, shape)`: a 1-D, 2-D or 3-D texture (buffer-backed; see the module)."""

    def __init__(self, fmt, arr_shape):
        channels, kind = format_info(fmt)
        shape = (arr_shape,) if isinstance(arr_shape, int) else tuple(int(n) for n in arr_shape)
        if not 1 <= len(shape) <= 3 or any(n <= 0 for n in shape):
            raise VkdiffValueError(f'ti.Texture shape must be 1 to 3 positive sizes, got '
                                   f'{arr_shape!r}')
        self.fmt = fmt
        self.dtype = {'unorm8': T.u8, 'unorm16': T.u16, 'f16': T.f16, 'f32': T.f32}[kind]
        self.num_channels = channels
        self.num_dims = len(shape)
        self.shape = tuple(arr_shape) if not isinstance(arr_shape, int) else (arr_shape,)
        self._arr = Ndarray(T.f32, shape, (4,), name='texture')
        init = np.zeros(shape + (4,), np.float32)
        init[..., 3] = 1.0 if channels < 4 else 0.0
        self._arr.from_numpy(init)

    def __repr__(self):
        return f'<ti.Texture {self.fmt} shape={self.shape}>'

    # ------------------------------------------------------------ host copies
    def _write(self, values):
        """Texels from `values` (shape + (k,), k >= 1 channels; the format's channels are
        taken, missing ones are 0)."""
        values = np.asarray(values, np.float32)
        shape = tuple(self._arr.shape)
        if values.shape[:len(shape)] != shape:
            raise VkdiffValueError(f'texture of shape {shape}: got data of shape {values.shape}')
        if values.ndim == len(shape):
            values = values[..., None]
        ch = self.num_channels
        texels = np.zeros(shape + (4,), np.float32)
        if ch < 4:
            texels[..., 3] = 1.0
        k = min(ch, values.shape[-1])
        texels[..., :k] = quantise_host(values[..., :k], self.fmt)
        self._arr.from_numpy(texels)

    def _read(self):
        """The texels as f32 (shape + (num_channels,))."""
        return self._arr.to_numpy()[..., :self.num_channels]

    def from_field(self, field):
        """Loads a (scalar or vector) field of the texture's shape."""
        self._write(field.to_numpy())

    def from_ndarray(self, ndarray):
        """Loads a (scalar or vector) ndarray of the texture's shape."""
        self._write(ndarray.to_numpy())

    def to_field(self, field):
        """Stores the texels into a field of the texture's shape (its first channels)."""
        data = self._read()
        want = tuple(field.shape) + tuple(getattr(field, 'elem_shape', ()) or ())
        k = want[-1] if len(want) > len(self._arr.shape) else None
        out = data[..., 0] if k is None else np.zeros(want, np.float32)
        if k is not None:
            out[..., :min(k, data.shape[-1])] = data[..., :k]
        field.from_numpy(out)

    def _check_image(self):
        if self.num_dims != 2 or self.fmt is not Format.rgba8:
            raise TaichiRuntimeError('from_image / to_image need a 2-D texture of format '
                                     f'ti.Format.rgba8, got {self.fmt} with {self.num_dims} '
                                     'dimensions')

    def from_image(self, image):
        """Loads a PIL image (converted to RGB) of the texture's size, oriented as Taichi 1.7.4
        does it (the image rotated 90 degrees counter-clockwise: texel [i, j] is
        np.rot90(pixels)[i, j]); alpha is 0."""
        from PIL import Image  # optional dependency, only for images
        if not isinstance(image, Image.Image):
            raise VkdiffValueError(f'from_image takes a PIL image, got {type(image).__name__}')
        self._check_image()
        if image.mode != 'RGB':
            image = image.convert('RGB')
        if tuple(image.size) != tuple(self.shape):
            raise VkdiffValueError(f'image size {image.size} differs from the texture shape '
                                   f'{tuple(self.shape)}')
        rgb = np.rot90(np.asarray(image, np.float32) / 255.0)
        texels = np.zeros(rgb.shape[:2] + (4,), np.float32)
        texels[..., :3] = rgb
        self._write(texels)

    def to_image(self):
        """The texture as a PIL RGB image (the inverse of from_image)."""
        from PIL import Image  # optional dependency, only for images
        self._check_image()
        rgb = np.rint(self._read()[..., :3] * 255.0).astype(np.uint8)
        return Image.fromarray(np.ascontiguousarray(np.rot90(rgb, -1)))


class TextureType:
    """`ti.types.texture(num_dimensions)`: a sampled (read-only) texture parameter."""

    def __init__(self, num_dimensions):
        self.num_dimensions = int(num_dimensions)

    def check(self, value, name):
        if not isinstance(value, Texture):
            raise TaichiRuntimeError(f'argument {name} must be a ti.Texture, got '
                                     f'{type(value).__name__}')
        if value.num_dims != self.num_dimensions:
            raise TaichiRuntimeError(f'TextureType dimension mismatch for argument {name}: '
                                     f'expected {self.num_dimensions}, got {value.num_dims}')


class RWTextureType(TextureType):
    """`ti.types.rw_texture(num_dimensions, fmt, lod)`: a storage texture parameter (load and
    store; only lod 0)."""

    def __init__(self, num_dimensions, lod=0, fmt=None):
        super().__init__(num_dimensions)
        if fmt is None:
            raise CompileError('fmt is required for rw_texture type')
        format_info(fmt)
        if lod != 0:
            raise UnsupportedError(f'rw_texture lod={lod}: vkdiff textures have one level (0)')
        self.fmt, self.lod = fmt, lod

    def check(self, value, name):
        if not isinstance(value, Texture):
            raise TaichiRuntimeError(f'argument {name} must be a ti.Texture, got '
                                     f'{type(value).__name__}')
        if value.num_dims != self.num_dimensions:
            raise TaichiRuntimeError(f'RWTextureType dimension mismatch for argument {name}: '
                                     f'expected {self.num_dimensions}, got {value.num_dims}')
        if value.fmt is not self.fmt:
            raise TaichiRuntimeError(f'RWTextureType format mismatch for argument {name}: '
                                     f'expected {self.fmt}, got {value.fmt}')
