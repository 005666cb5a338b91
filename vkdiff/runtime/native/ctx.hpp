// vkdiff.runtime._vkrt: Ctx (everything one Device owns: instance, VkDevice, queue,
// kp::Manager) and Features (the optional features queried, then enabled).
#pragma once
#include "commands.hpp"

namespace vkrt {

// Everything one Device owns; shared by every object made from it.
struct Ctx {
    std::shared_ptr<Instance> owner;  // keeps the shared VkInstance alive
    std::shared_ptr<vk::Instance> instance;
    std::shared_ptr<vk::PhysicalDevice> phys;
    std::shared_ptr<vk::Device> device;
    std::shared_ptr<vk::Queue> queue;
    uint32_t family = 0;
    std::shared_ptr<kp::Manager> mgr;
    VkPhysicalDeviceLimits limits{};
    VkDeviceSize max_alloc = 0;
    bool has_budget = false;  // VK_EXT_memory_budget enabled
    bool mapped = false;  // Buffers are one mapped device-local buffer (unified memory)
    std::mutex queue_mutex;  // vkQueueSubmit needs external synchronisation
    std::shared_mutex building;  // held shared while pipelines are made without the GIL; close() waits
    bool closed = false;
    // The watchdog: a wait for submitted work longer than this raises Timeout (0: no limit).
    uint64_t watchdog_ns = 0;
    // A wait timed out and that work has not been seen finishing since: it may still run
    // (a spinning shader on a driver that cannot stop it), so nothing it uses is destroyed
    // and close() neither waits nor frees (keep_forever).
    bool hung = false;
    std::vector<std::weak_ptr<kp::Tensor>> tensors;
    std::vector<std::weak_ptr<kp::Algorithm>> algos;
    std::vector<std::weak_ptr<kp::Sequence>> seqs;
    std::vector<std::weak_ptr<TexelAlgo>> texel_algos;
    std::vector<std::weak_ptr<TexelView>> texel_views;
    IndirectArgs indirect;  // made by the first indirect dispatch
    std::shared_ptr<kp::Tensor> dummy;  // bound to kernels that take no buffer
    std::shared_ptr<OpBarrier> barrier = std::make_shared<OpBarrier>(
      Stage::eComputeShader | Stage::eTransfer, Access::eShaderWrite | Access::eTransferWrite,
      Stage::eComputeShader | Stage::eTransfer,
      Access::eShaderRead | Access::eShaderWrite | Access::eTransferRead | Access::eTransferWrite);
    std::shared_ptr<OpBarrier> host_barrier = std::make_shared<OpBarrier>(
      Stage::eComputeShader | Stage::eTransfer, Access::eShaderWrite | Access::eTransferWrite,
      Stage::eHost, Access::eHostRead);

    ~Ctx() { close(); }

    void check_open() const
    {
        if (closed) fail("this vkdiff Device is closed");
    }

    template<class T>
    void track(std::vector<std::weak_ptr<T>>& v, const std::shared_ptr<T>& p)
    {
        if (v.size() >= 64 && v.size() == v.capacity())
            v.erase(std::remove_if(v.begin(), v.end(), [](auto& w) { return w.expired(); }), v.end());
        v.push_back(p);
    }

    std::shared_ptr<kp::Sequence> sequence()
    {
        auto s = std::make_shared<kp::Sequence>(phys, device, queue, family);
        track(seqs, s);
        return s;
    }

    void run(kp::Sequence& seq)  // submit and wait; may run without the GIL
    {
        VkFence f = start(seq);
        if (f != VK_NULL_HANDLE) {
            try {
                await(f, "a transfer");
            } catch (const Timeout&) {
                keep_forever(seq.shared_from_this());
                throw;
            }
        }
        seq.evalAwait();
    }

    // Submit only; may run without the GIL. With the watchdog on, also a fence that signals
    // once everything submitted so far has finished (an empty submission: kp's own fence
    // cannot be waited on with a limit, its evalAwait frees it even on a timeout).
    VkFence start(kp::Sequence& seq)
    {
        std::lock_guard<std::mutex> lock(queue_mutex);
        seq.evalAsync();
        if (!watchdog_ns) return VK_NULL_HANDLE;
        VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence f = VK_NULL_HANDLE;
        check(vkCreateFence(*device, &fci, nullptr, &f), "vkCreateFence");
        VkResult r = vkQueueSubmit(*queue, 0, nullptr, f);
        if (r != VK_SUCCESS) {
            vkDestroyFence(*device, f, nullptr);
            check(r, "vkQueueSubmit");
        }
        return f;
    }

    // Wait for fence f (from start) within the watchdog's limit, then free it. On a timeout
    // the fence stays (a later await may find it signalled: the work finished after all) and
    // Timeout is thrown. Clears `hung` when it finishes in time.
    void await(VkFence f, const char* what)
    {
        VkResult r = vkWaitForFences(*device, 1, &f, VK_TRUE, watchdog_ns ? watchdog_ns : UINT64_MAX);
        if (r == VK_TIMEOUT) {
            hung = true;
            throw Timeout(std::string(what) + " submitted to the device has not finished within "
                          "the watchdog's limit of " + std::to_string(watchdog_ns / 1e9) + " s");
        }
        vkDestroyFence(*device, f, nullptr);
        check(r, "vkWaitForFences");
        hung = false;
    }

    // A zeroed buffer of nbytes (rounded up); `allocated` receives the bytes of
    // device memory it holds (both allocations of a staged one).
    std::shared_ptr<kp::Tensor> tensor(uint64_t nbytes, uint64_t* allocated = nullptr)
    {
        // Round up to a multiple of nonCoherentAtomSize: kp flushes the whole
        // mapped range when it destroys the buffer (the staging one, or the
        // mapped one itself).
        uint64_t atom = std::max<uint64_t>(4, limits.nonCoherentAtomSize);
        uint64_t words = (std::max<uint64_t>(nbytes, 1) + atom - 1) / atom * atom / 4;
        if (words * 4 > max_alloc)
            fail("cannot allocate a buffer of " + std::to_string(nbytes) +
                 " bytes: the device's largest allocation is " + std::to_string(max_alloc));
        std::vector<uint32_t> zeros;
        try {
            zeros.assign(words, 0);
        } catch (const std::bad_alloc&) {
            throw OutOfMemory("out of host memory for " + std::to_string(nbytes) + " bytes");
        }
        uint64_t size = reserve(words * 4);
        if (allocated) *allocated = size * (mapped ? 1 : 2);
        if (mapped) {  // kp maps it and copies the zeros in: nothing to record
            auto t = mgr->tensor(zeros.data(), uint32_t(words), 4, kp::Tensor::TensorDataTypes::eUnsignedInt,
                                 kp::Tensor::TensorTypes::eHost);
            track(tensors, t);
            return t;
        }
        auto t = mgr->tensor(zeros.data(), uint32_t(words), 4, kp::Tensor::TensorDataTypes::eUnsignedInt);
        track(tensors, t);
        auto seq = sequence();  // zero the device-local side as well
        seq->record(std::make_shared<OpCopy>(t, true));
        seq->record(host_barrier);
        run(*seq);
        seq->destroy();
        return t;
    }

    // The memory requirements of a buffer of `bytes` as kp::Tensor creates it
    // (the same usage for eDevice and eHost).
    VkMemoryRequirements requirements(uint64_t bytes)
    {
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = bytes;
        bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                    VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        VkBuffer probe = VK_NULL_HANDLE;
        check(vkCreateBuffer(*device, &bci, nullptr, &probe), "vkCreateBuffer");
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(*device, probe, &req);
        vkDestroyBuffer(*device, probe, nullptr);
        return req;
    }

    // The memory type kp::Tensor allocates from for `flags`: the first one
    // allowed whose property flags include them (UINT32_MAX: none).
    uint32_t kp_memory_type(const VkPhysicalDeviceMemoryProperties& mp, uint32_t allowed,
                            VkMemoryPropertyFlags flags) const
    {
        for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
            if ((allowed & (1u << i)) && (mp.memoryTypes[i].propertyFlags & flags) == flags) return i;
        return UINT32_MAX;
    }

    // Unified memory: is the memory kp::Tensor eHost maps (host-visible,
    // coherent) device-local as well?
    bool host_memory_is_device_local()
    {
        VkPhysicalDeviceMemoryProperties mp;
        vkGetPhysicalDeviceMemoryProperties(*phys, &mp);
        uint32_t i = kp_memory_type(mp, requirements(4).memoryTypeBits,
                                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        return i != UINT32_MAX && (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    }

    // kp::Tensor ignores vkAllocateMemory's result (then binds a null
    // VkDeviceMemory: drivers crash). So first check the heaps' budgets and
    // make the same allocations kp will make (mapped: the one host-visible
    // buffer; staged: device-local and host-visible staging) and one more of
    // the same size, checking their VkResult, then free them for kp: the
    // spare one is a margin, so that kp's allocations right after still find
    // room where the driver's allocator (lavapipe: malloc) has fragmented its
    // free space near a limit. Returns the size of one allocation.
    uint64_t reserve(uint64_t bytes)
    {
        VkMemoryRequirements req = requirements(bytes);

        VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
        VkPhysicalDeviceMemoryProperties2 mp2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
        if (has_budget) mp2.pNext = &budget;
        vkGetPhysicalDeviceMemoryProperties2(*phys, &mp2);
        const auto& mp = mp2.memoryProperties;
        const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        const VkMemoryPropertyFlags wanted[2] = {mapped ? host : VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT), host};
        const int count = mapped ? 1 : 2;
        uint32_t types[2];
        VkDeviceSize need[VK_MAX_MEMORY_HEAPS] = {};
        for (int k = 0; k < count; k++) {
            types[k] = kp_memory_type(mp, req.memoryTypeBits, wanted[k]);
            if (types[k] == UINT32_MAX) fail("no memory type for a buffer of " + std::to_string(bytes) + " bytes");
            need[mp.memoryTypes[types[k]].heapIndex] += req.size;
        }
        for (uint32_t h = 0; has_budget && h < mp.memoryHeapCount; h++)
            if (need[h] && budget.heapUsage[h] + need[h] > budget.heapBudget[h])
                throw OutOfMemory(
                  "device memory heap " + std::to_string(h) + " would exceed its budget: " +
                  std::to_string(budget.heapUsage[h]) + " bytes in use + " + std::to_string(need[h]) +
                  " requested > budget " + std::to_string(budget.heapBudget[h]));
        VkDeviceMemory mem[3] = {VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE};
        VkResult r = VK_SUCCESS;
        for (int k = 0; k <= count && r == VK_SUCCESS; k++) {
            VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
            mai.allocationSize = req.size;
            mai.memoryTypeIndex = types[k < count ? k : 0];  // k == count: the margin
            r = vkAllocateMemory(*device, &mai, nullptr, &mem[k]);
        }
        for (auto m : mem)
            if (m != VK_NULL_HANDLE) vkFreeMemory(*device, m, nullptr);
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
            throw OutOfMemory("vkAllocateMemory of " + std::to_string(req.size) + " bytes failed: " +
                              vk::to_string(vk::Result(r)));
        check(r, "vkAllocateMemory");
        return req.size;
    }

    void close()
    {
        if (closed) return;
        closed = true;
        if (!device) return;
        if (hung) {  // its commands may still run: free nothing, wait for nothing
            for (auto& w : seqs) if (auto s = w.lock()) keep_forever(s);
            for (auto& w : algos) if (auto a = w.lock()) keep_forever(a);
            for (auto& w : texel_algos) if (auto a = w.lock()) keep_forever(a);
            for (auto& w : texel_views) if (auto v = w.lock()) keep_forever(v);
            for (auto& w : tensors) if (auto t = w.lock()) keep_forever(t);
            keep_forever(mgr);
            keep_forever(device);
            keep_forever(owner);
            return;
        }
        std::unique_lock<std::shared_mutex> wait_builds(building);
        std::lock_guard<std::mutex> lock(queue_mutex);
        vkDeviceWaitIdle(*device);
        for (auto& w : seqs) if (auto s = w.lock()) s->destroy();
        for (auto& w : algos) if (auto a = w.lock()) a->destroy();
        for (auto& w : texel_algos) if (auto a = w.lock()) a->destroy();
        for (auto& w : texel_views) if (auto v = w.lock()) v->destroy();
        for (auto& w : tensors) if (auto t = w.lock()) t->destroy();
        indirect.destroy();
        mgr.reset();  // kp::Manager first: it was handed our device, it does not own it
        vkDestroyDevice(*device, nullptr);
        owner.reset();  // destroys the VkInstance if no other Device uses it
    }
};

// Feature structs queried from the device, then (less what is disabled) enabled.
struct Features {
    vk::PhysicalDeviceFeatures2 f2;
    vk::PhysicalDeviceVulkan11Features v11;
    vk::PhysicalDeviceVulkan12Features v12;
    vk::PhysicalDeviceVulkan13Features v13;
    vk::PhysicalDeviceShaderAtomicInt64Features ai64;  // 1.1 devices only (in v12 otherwise)
    vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT af;
    vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT af2;
    bool has_v12 = false, has_v13 = false, has_ai64 = false, has_af = false, has_af2 = false;

    void link()
    {
        void** tail = &f2.pNext;
        auto add = [&](bool on, auto& s) {
            s.pNext = nullptr;
            if (on) { *tail = &s; tail = &s.pNext; }
        };
        add(has_v12, v11);
        add(has_v12, v12);
        add(has_v13, v13);
        add(has_ai64, ai64);
        add(has_af, af);
        add(has_af2, af2);
    }
    vk::Bool32& int64_atomics() { return has_v12 ? v12.shaderBufferInt64Atomics : ai64.shaderBufferInt64Atomics; }
    vk::Bool32& int64_shared_atomics() { return has_v12 ? v12.shaderSharedInt64Atomics : ai64.shaderSharedInt64Atomics; }
};


}  // namespace vkrt
