"""Shows that the Khronos validation layer is loaded and catches a missing barrier.

    .venv/bin/python tools/validation/demo_missing_barrier.py

Records a kernel that writes buffer A and one that reads it, first without a
barrier between them (the layer reports SYNC-HAZARD-READ-AFTER-WRITE), then
with Batch.barrier() (the layer reports nothing).

Note: this layer version (1.3.239) only sees a hazard between two dispatches
when the SPIR-V says how a binding is used: a binding declared neither
readonly (NonWritable) nor writeonly (NonReadable) counts as a write only, and
write-after-write between dispatches is not reported at all.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from vkdiff.runtime import validation  # noqa: E402

WRITE = """#version 450
layout(local_size_x = 64) in;
layout(binding = 0) writeonly buffer A { uint a[]; };
void main() { a[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x; }
"""
READ = """#version 450
layout(local_size_x = 64) in;
layout(binding = 0) readonly buffer A { uint a[]; };
layout(binding = 1) writeonly buffer B { uint b[]; };
void main() { b[gl_GlobalInvocationID.x] = a[gl_GlobalInvocationID.x] + 1u; }
"""


def spirv(src, tmp):
    path = os.path.join(tmp, "s.spv")
    subprocess.run([shutil.which("glslangValidator"), "-V", "--target-env", "vulkan1.1", "--stdin",
                    "-S", "comp", "-o", path], input=src.encode(), check=True, capture_output=True)
    return open(path, "rb").read()


def main():
    tmp = tempfile.mkdtemp()
    validation.enable(os.path.join(tmp, "vk_validation.log"))
    from vkdiff.runtime import _vkrt
    dev = _vkrt.Device()
    a, b = dev.buffer(256), dev.buffer(256)
    w = dev.algorithm([a], spirv(WRITE, tmp), 0)
    r = dev.algorithm([a, b], spirv(READ, tmp), 0)
    for with_barrier in (False, True):
        batch = dev.batch()
        batch.dispatch(w, 1, b"")
        if with_barrier:
            batch.barrier()
        batch.dispatch(r, 1, b"")
        batch.submit()
        messages = validation.read_new_messages()
        print(f"{'with' if with_barrier else 'without'} barrier: {len(messages)} message(s)")
        for m in messages:
            print("   ", m.splitlines()[0][:160])
    dev.close()
    print("log:", validation.log_path())


if __name__ == "__main__":
    main()
