#!/usr/bin/env python3
"""Benchmark vkdiff.GUI: 10,000 circles of radius 3 at 800x800.

Prints frames per second of ``gui.circles(...); gui.show()`` off-screen
(show_gui=False) and in a real GLFW/OpenGL window.  For the window it uses
$DISPLAY when set, otherwise it starts its own ``Xvfb -noreset`` (skipped
with a note when Xvfb is not installed).  The window is measured unthrottled
(fps_limit=None) and with the default fps_limit=60.

    PYTHONPATH=. python3 tools/bench_gui.py [--frames 120] [--n 10000] [--res 800]
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from vkdiff.gui import GUI  # noqa: E402


def run(gui, pos, frames, radius):
    gui.circles(pos[0], radius=radius, color=0xED553B)  # warm-up
    gui.show()
    times = []
    t0 = time.perf_counter()
    for i in range(frames):
        t = time.perf_counter()
        gui.circles(pos[i % len(pos)], radius=radius, color=0xED553B)
        gui.show()
        times.append(time.perf_counter() - t)
    total = time.perf_counter() - t0
    ms = np.array(times) * 1e3
    return frames / total, np.median(ms), np.percentile(ms, 90)


def report(label, fps, med, p90):
    print(f"{label:<34} {fps:7.1f} FPS   frame median {med:6.2f} ms   p90 {p90:6.2f} ms")


def start_xvfb():
    exe = shutil.which("Xvfb")
    if exe is None:
        return None, None
    n = next(n for n in range(91, 200) if not os.path.exists(f"/tmp/.X11-unix/X{n}")
             and not os.path.exists(f"/tmp/.X{n}-lock"))
    proc = subprocess.Popen([exe, f":{n}", "-screen", "0", "1024x768x24", "-noreset", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        if os.path.exists(f"/tmp/.X11-unix/X{n}"):
            return proc, f":{n}"
        time.sleep(0.05)
    proc.kill()
    return None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--res", type=int, default=800)
    ap.add_argument("--radius", type=float, default=3.0)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    pos = [rng.random((args.n, 2)).astype(np.float32) for _ in range(8)]
    print(f"{args.n} circles of radius {args.radius} at {args.res}x{args.res}, {args.frames} frames")

    gui = GUI("bench", res=args.res, show_gui=False)
    report("headless circles()+show()", *run(gui, pos, args.frames, args.radius))

    proc = None
    if not os.environ.get("DISPLAY"):
        proc, display = start_xvfb()
        if display is None:
            print("window: skipped (no $DISPLAY and Xvfb is not installed)")
            return
        os.environ["DISPLAY"] = display
    try:
        gui = GUI("bench", res=args.res, fps_limit=None)
        if not gui.show_gui:
            print("window: skipped (no window could be opened)")
            return
        where = f"DISPLAY={os.environ['DISPLAY']}" + (" (own Xvfb)" if proc else "")
        report("window, fps_limit=None", *run(gui, pos, args.frames, args.radius))
        gui.fps_limit = 60
        report("window, fps_limit=60", *run(gui, pos, args.frames, args.radius))
        gui.close()
        print(f"window on {where}")
    finally:
        if proc is not None:
            from vkdiff.gui import window
            window.reset()  # disconnect GLFW before its X server goes away
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
