"""API layer: ``ti.tools.VideoManager`` (Taichi's ``taichi.tools.video``): frames written as PNG
files (``output_dir/frames/000012.png``), made into mp4/gif by the ``ffmpeg`` program. Without
ffmpeg on PATH, make_video warns that it made no video and keeps the frames."""
import os
import shutil
import subprocess
import warnings

from .image import imwrite

FRAME_FN_TEMPLATE = "%06d.png"
FRAME_DIR = "frames"


class VideoManager:
    def __init__(self, output_dir, video_filename=None, width=None, height=None,
                 post_processor=None, framerate=24, automatic_build=True):
        self.width, self.height = width, height
        self.directory = output_dir
        self.frame_directory = os.path.join(output_dir, FRAME_DIR)
        os.makedirs(self.frame_directory, exist_ok=True)
        self.video_filename = video_filename
        self.next_video_checkpoint = 4
        self.framerate = framerate
        self.post_processor = post_processor
        self.frame_counter = 0
        self.frame_fns = []
        self.automatic_build = automatic_build

    def get_output_filename(self, suffix):
        name = os.path.splitext(self.video_filename)[0] if self.video_filename else "video"
        return os.path.join(self.directory, name + suffix)

    def get_frame_directory(self):
        return self.frame_directory

    def write_frame(self, img):
        """Write one (w, h[, c]) image as the next frame (odd sizes lose their last row/column,
        as video encoders need even sizes)."""
        img = img if hasattr(img, "shape") and not hasattr(img, "to_numpy") else img.to_numpy()
        img = img[:img.shape[0] // 2 * 2, :img.shape[1] // 2 * 2]
        if self.post_processor:
            img = self.post_processor.process(img)
        if self.width is None:
            self.width, self.height = img.shape[0], img.shape[1]
        fn = FRAME_FN_TEMPLATE % self.frame_counter
        self.frame_fns.append(fn)
        imwrite(img, os.path.join(self.frame_directory, fn))
        self.frame_counter += 1
        if self.automatic_build and self.frame_counter % self.next_video_checkpoint == 0:
            self.make_video()
            self.next_video_checkpoint *= 2

    def write_frames(self, images):
        for img in images:
            self.write_frame(img)

    def clean_frames(self):
        for fn in self.frame_fns:
            path = os.path.join(self.frame_directory, fn)
            if os.path.exists(path):
                os.remove(path)

    def make_video(self, mp4=True, gif=True):
        """Encode the frames as video.mp4 and/or video.gif in output_dir with ffmpeg."""
        ffmpeg = shutil.which("ffmpeg")
        if ffmpeg is None:
            warnings.warn(f"VideoManager: ffmpeg is not installed, no video made; the frames are "
                          f"in {self.frame_directory}", RuntimeWarning, stacklevel=2)
            return
        mp4_fn = self.get_output_filename(".mp4")
        run = lambda *a: subprocess.run([ffmpeg, "-loglevel", "error", "-y", *a], check=True)
        run("-framerate", str(self.framerate), "-i",
            os.path.join(self.frame_directory, FRAME_FN_TEMPLATE), "-s:v",
            f"{self.width}x{self.height}", "-c:v", "libx264", "-pix_fmt", "yuv420p", mp4_fn)
        if gif:
            run("-i", mp4_fn, "-vf", f"fps={self.framerate}", self.get_output_filename(".gif"))
        if not mp4:
            os.remove(mp4_fn)
