// vkdiff.runtime._vkrt: texel reads: TensorMemoryTag (kp::Tensor's private memory),
// TexelView (a storage texel buffer view of a Buffer) and TexelAlgo (a pipeline with texel bindings).
#pragma once
#include "common.hpp"

namespace vkrt {

// kp::Tensor keeps its VkDeviceMemory private, and creates its buffers without the texel
// usage: a texel view needs a second VkBuffer bound to that memory. Explicit instantiation
// (where access is not checked) hands out the member pointer.
struct TensorMemoryTag {
    using type = std::shared_ptr<vk::DeviceMemory> kp::Tensor::*;
    friend type member(TensorMemoryTag);
};
template<typename Tag, typename Tag::type M> struct Expose {
    friend typename Tag::type member(Tag) { return M; }
};
template struct Expose<TensorMemoryTag, &kp::Tensor::mPrimaryMemory>;

// Texel reads (feature "texel_reads"): a storage texel buffer view of a Buffer's memory (an
// alias VkBuffer with the texel usage) that a shader reads with OpImageRead. lavapipe
// (gallivm) reads an image buffer with a vector gather, where each storage-buffer load is a
// loop over the SIMD lanes with a bounds check per lane (tools/access_forms: 10-30x per load).
struct TexelView {
    VkDevice dev = VK_NULL_HANDLE;
    VkBuffer buf = VK_NULL_HANDLE;
    VkBufferView view = VK_NULL_HANDLE;
    void destroy()
    {
        if (view) vkDestroyBufferView(dev, view, nullptr);
        if (buf) vkDestroyBuffer(dev, buf, nullptr);
        view = VK_NULL_HANDLE;
        buf = VK_NULL_HANDLE;
    }
    ~TexelView() { destroy(); }
};

// A pipeline whose bindings are the storage buffers 0..n-1 (as kp::Algorithm's) followed by
// storage texel buffers n.. (kp::Algorithm binds storage buffers only).
struct TexelAlgo {
    VkDevice dev = VK_NULL_HANDLE;
    VkDescriptorSetLayout dsl = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkShaderModule module = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    VkDescriptorSet set = VK_NULL_HANDLE;
    uint32_t push_range = 4;
    std::vector<std::shared_ptr<kp::Tensor>> tensors;  // kept alive with the descriptor set
    std::vector<std::shared_ptr<TexelView>> views;
    void destroy()
    {
        if (!dev) return;
        if (pipeline) vkDestroyPipeline(dev, pipeline, nullptr);
        if (module) vkDestroyShaderModule(dev, module, nullptr);
        if (layout) vkDestroyPipelineLayout(dev, layout, nullptr);
        if (pool) vkDestroyDescriptorPool(dev, pool, nullptr);
        if (dsl) vkDestroyDescriptorSetLayout(dev, dsl, nullptr);
        dev = VK_NULL_HANDLE;
    }
    ~TexelAlgo() { destroy(); }
    void record(VkCommandBuffer cb, bool bind, const void* push, uint32_t bytes)
    {
        if (bind) {
            vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
            vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
        }
        if (bytes) vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, bytes, push);
    }
};


}  // namespace vkrt
