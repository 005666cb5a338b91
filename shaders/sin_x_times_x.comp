#version 450
// y[i] = sin(x[i]) * x[i], grid-stride loop (tools/bench.py's hand-written baseline).
// Compile: glslangValidator -V --target-env vulkan1.1 sin_x_times_x.comp -o sin_x_times_x.spv
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

void main() {
    uint n = uint(x.length());
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
        float v = x[i];
        y[i] = sin(v) * v;
    }
}
