// vkdiff.runtime._vkrt: the kp::OpBase commands recorded into a kp::Sequence (copies,
// fills, barriers, dispatches, indirect dispatches) and IndirectArgs.
#pragma once
#include "common.hpp"
#include "texel.hpp"

namespace vkrt {

// Ops recorded into a kp::Sequence. Unlike kp's own ops they add no barriers.
struct OpCopy : kp::OpBase {
    std::shared_ptr<kp::Tensor> t;
    bool to_device;
    OpCopy(std::shared_ptr<kp::Tensor> t, bool to_device) : t(std::move(t)), to_device(to_device) {}
    void record(const vk::CommandBuffer& cb) override
    {
        if (to_device) t->recordCopyFromStagingToDevice(cb);
        else t->recordCopyFromDeviceToStaging(cb);
    }
    void preEval(const vk::CommandBuffer&) override {}
    void postEval(const vk::CommandBuffer&) override {}
};

// vkCmdFillBuffer / vkCmdCopyBuffer on Buffers' device-local buffers (transfer writes: the
// Python layer orders them with Batch.barrier, whose global barrier covers the transfer stage).
struct OpFill : kp::OpBase {
    std::shared_ptr<kp::Tensor> t;
    vk::DeviceSize offset, size;
    uint32_t word;
    OpFill(std::shared_ptr<kp::Tensor> t, vk::DeviceSize offset, vk::DeviceSize size, uint32_t word)
      : t(std::move(t)), offset(offset), size(size), word(word) {}
    void record(const vk::CommandBuffer& cb) override
    {
        cb.fillBuffer(t->constructDescriptorBufferInfo().buffer, offset, size, word);
    }
    void preEval(const vk::CommandBuffer&) override {}
    void postEval(const vk::CommandBuffer&) override {}
};

struct OpCopyRegion : kp::OpBase {
    std::shared_ptr<kp::Tensor> src, dst;
    vk::BufferCopy region;
    OpCopyRegion(std::shared_ptr<kp::Tensor> src, std::shared_ptr<kp::Tensor> dst, vk::BufferCopy region)
      : src(std::move(src)), dst(std::move(dst)), region(region) {}
    void record(const vk::CommandBuffer& cb) override
    {
        cb.copyBuffer(src->constructDescriptorBufferInfo().buffer,
                      dst->constructDescriptorBufferInfo().buffer, region);
    }
    void preEval(const vk::CommandBuffer&) override {}
    void postEval(const vk::CommandBuffer&) override {}
};

struct OpBarrier : kp::OpBase {
    vk::PipelineStageFlags src_stage, dst_stage;
    vk::MemoryBarrier barrier;
    OpBarrier(vk::PipelineStageFlags ss, vk::AccessFlags sa, vk::PipelineStageFlags ds, vk::AccessFlags da)
      : src_stage(ss), dst_stage(ds), barrier(sa, da) {}
    void record(const vk::CommandBuffer& cb) override
    {
        cb.pipelineBarrier(src_stage, dst_stage, {}, barrier, nullptr, nullptr);
    }
    void preEval(const vk::CommandBuffer&) override {}
    void postEval(const vk::CommandBuffer&) override {}
};

struct OpDispatch : kp::OpBase {
    std::shared_ptr<kp::Algorithm> algo;  // kept alive until the submit is done
    std::shared_ptr<TexelAlgo> own;  // instead of algo: a pipeline with texel bindings
    bool bind = true;
    uint32_t groups_x = 1;
    const void* push = nullptr;  // only valid during record()
    uint32_t push_bytes = 0;
    void record(const vk::CommandBuffer& cb) override
    {
        if (own) {
            own->record(static_cast<VkCommandBuffer>(cb), bind, push, push_bytes);
            cb.dispatch(groups_x, 1, 1);
            push = nullptr;
            return;
        }
        if (bind) algo->recordBindCore(cb);
        if (push_bytes) {
            algo->setPushConstants(const_cast<void*>(push), push_bytes / 4, 4);
            algo->recordBindPush(cb);
        }
        cb.dispatch(groups_x, 1, 1);
        push = nullptr;
    }
    void preEval(const vk::CommandBuffer&) override {}
    void postEval(const vk::CommandBuffer&) override {}
};

// Indirect dispatch (a launch geometry the device computes: lang/compiled.py's geometry
// tasks). kp::Tensor's buffers lack INDIRECT_BUFFER usage, so a geometry task writes its
// workgroup count (x, y, z) into an ordinary Buffer and each indirect dispatch copies those
// 12 bytes into this one buffer (TRANSFER_DST | INDIRECT_BUFFER), one per Device, then
// dispatches from it. Made on first use, destroyed by Ctx::close.
struct IndirectArgs {
    VkDevice device = VK_NULL_HANDLE;
    VkBuffer buf = VK_NULL_HANDLE;
    VkDeviceMemory mem = VK_NULL_HANDLE;

    void create(VkPhysicalDevice phys, VkDevice dev)
    {
        device = dev;
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = 16;
        bci.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
        check(vkCreateBuffer(dev, &bci, nullptr, &buf), "vkCreateBuffer (indirect arguments)");
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(dev, buf, &req);
        VkPhysicalDeviceMemoryProperties mp;
        vkGetPhysicalDeviceMemoryProperties(phys, &mp);
        uint32_t type = UINT32_MAX;
        for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; i++)  // device-local first
            if ((req.memoryTypeBits & (1u << i)) &&
                (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
                type = i;
        for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; i++)
            if (req.memoryTypeBits & (1u << i)) type = i;
        if (type == UINT32_MAX) {
            destroy();
            fail("no memory type for the indirect dispatch arguments");
        }
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.allocationSize = req.size;
        mai.memoryTypeIndex = type;
        VkResult r = vkAllocateMemory(dev, &mai, nullptr, &mem);
        if (r != VK_SUCCESS) {
            mem = VK_NULL_HANDLE;
            destroy();
            check(r, "vkAllocateMemory (indirect arguments)");
        }
        check(vkBindBufferMemory(dev, buf, mem, 0), "vkBindBufferMemory (indirect arguments)");
    }
    void destroy()
    {
        if (buf != VK_NULL_HANDLE) vkDestroyBuffer(device, buf, nullptr);
        if (mem != VK_NULL_HANDLE) vkFreeMemory(device, mem, nullptr);
        buf = VK_NULL_HANDLE;
        mem = VK_NULL_HANDLE;
    }
};

// Copy a geometry Buffer's first 12 bytes into the indirect arguments, then dispatch `algo`
// with them. Barriers: the geometry task's shader write (and earlier copies and indirect reads
// of the arguments: write-after-write, write-after-read) before the copy; the copy before the
// indirect read (TRANSFER_WRITE -> INDIRECT_COMMAND_READ at DRAW_INDIRECT, a buffer barrier).
struct OpDispatchIndirect : kp::OpBase {
    std::shared_ptr<kp::Algorithm> algo;  // kept alive until the submit is done
    std::shared_ptr<TexelAlgo> own;  // instead of algo: a pipeline with texel bindings
    std::shared_ptr<kp::Tensor> geometry;
    VkBuffer args = VK_NULL_HANDLE;
    bool bind = true;
    const void* push = nullptr;  // only valid during record()
    uint32_t push_bytes = 0;
    void record(const vk::CommandBuffer& cb) override
    {
        vk::MemoryBarrier before(Access::eShaderWrite | Access::eTransferWrite,
                                 Access::eTransferRead | Access::eTransferWrite);
        cb.pipelineBarrier(Stage::eComputeShader | Stage::eTransfer | Stage::eDrawIndirect,
                           Stage::eTransfer, {}, before, nullptr, nullptr);
        vk::Buffer dst(args);
        cb.copyBuffer(geometry->constructDescriptorBufferInfo().buffer, dst, vk::BufferCopy(0, 0, 12));
        vk::BufferMemoryBarrier after(Access::eTransferWrite, Access::eIndirectCommandRead,
                                      VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED, dst, 0, 12);
        cb.pipelineBarrier(Stage::eTransfer, Stage::eDrawIndirect, {}, nullptr, after, nullptr);
        if (own) {
            own->record(static_cast<VkCommandBuffer>(cb), bind, push, push_bytes);
        } else {
            if (bind) algo->recordBindCore(cb);
            if (push_bytes) {
                algo->setPushConstants(const_cast<void*>(push), push_bytes / 4, 4);
                algo->recordBindPush(cb);
            }
        }
        cb.dispatchIndirect(dst, 0);
        push = nullptr;
    }
    void preEval(const vk::CommandBuffer&) override {}
    void postEval(const vk::CommandBuffer&) override {}
};


}  // namespace vkrt
