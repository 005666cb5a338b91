// vkdiff.runtime._vkrt: PyDevice's teardown and prewarm(), which need Prewarmer complete.
#include "prewarm.hpp"

namespace vkrt {

PyDevice::~PyDevice() { prewarmer.reset(); }

void PyDevice::stop_prewarm()
{
    if (prewarmer) {
        py::gil_scoped_release nogil;  // (the worker finishes its current shader)
        prewarmer.reset();
    }
}

void PyDevice::close()
{
    stop_prewarm();
    ctx->close();
}

// Queue the shaders of (buffers, spirv, push_constant_bytes) items to be compiled on a helper
// device (see Prewarmer), in this order; returns at once.
void PyDevice::prewarm(const std::vector<py::tuple>& items)
{
    ctx->check_open();
    std::vector<AlgoSpec> specs;
    for (auto& it : items) {
        if (it.size() != 3) fail("prewarm: each item is (buffers, spirv, push_constant_bytes)");
        specs.push_back(spec(it[0].cast<std::vector<std::shared_ptr<PyBuffer>>>(), it[1].cast<py::bytes>(),
                             it[2].cast<long long>()));
    }
    if (!prewarmer) prewarmer = std::make_unique<Prewarmer>(index, disabled, ctx->owner);
    prewarmer->add(std::move(specs));
}

}  // namespace vkrt
