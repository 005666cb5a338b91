"""API layer: ``ti.tools`` (Taichi's ``taichi.tools``): image files (imwrite, imread, imresize,
imshow), PLY export (PLYWriter) and frame sequences to video (VideoManager)."""
from .image import cook_image_to_bytes, imread, imresize, imshow, imwrite
from .ply import PLYWriter
from .video import VideoManager

__all__ = ["imread", "imresize", "imshow", "imwrite", "PLYWriter", "VideoManager"]
