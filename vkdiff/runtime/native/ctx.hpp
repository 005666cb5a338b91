// vkdiff.runtime._vkrt: Ctx (everything one Device owns: instance, VkDevice, queue,
// kp::Manager) and Features (the optional features queried, then enabled).
#pragma once
#include "commands.hpp"

namespace vkrt {

// ---------------------------------------------------------------- memory
// Which memory types a device's Buffers use, chosen by the device type (never its name) from
// its memory types (their property flags, in the device's order). A pure function, so that
// tests run it on the memory types of devices this machine does not have.
// - Mapped fields (one buffer the host maps: no staging copy) only on integrated GPUs and CPU
//   drivers, whose DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT memory is system memory; HOST_CACHED
//   preferred there (host reads of a field are ordinary cached reads).
// - Elsewhere (discrete and virtual GPUs, other): fields in DEVICE_LOCAL memory that is not
//   HOST_VISIBLE, so never in BAR memory (a resizable BAR makes DEVICE_LOCAL|HOST_VISIBLE large
//   on a discrete GPU, yet host reads through it are uncached); a staging copy in
//   HOST_VISIBLE|HOST_COHERENT memory, HOST_CACHED where a type has it (downloads are read by
//   the host), and not DEVICE_LOCAL (BAR) where another type serves.
// `allowed`: the memoryTypeBits of the buffers (field, staging). UINT32_MAX in a result: none.
struct MemoryChoice {
    uint32_t field = UINT32_MAX, staging = UINT32_MAX;
    bool mapped = false;
};

inline MemoryChoice choose_memory(uint32_t device_type, const std::vector<uint32_t>& flags,
                                  uint32_t field_allowed, uint32_t staging_allowed, bool unified_allowed)
{
    const uint32_t DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                   HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, CA = VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                   // never for a Buffer: lazily allocated, protected, device-coherent AMD memory
                   AVOID = VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT | VK_MEMORY_PROPERTY_PROTECTED_BIT | 0xC0u;
    // the first type allowed with all of `must`, none of `must_not`; one with `prefer` first
    auto pick = [&](uint32_t allowed, uint32_t must, uint32_t must_not, uint32_t prefer) {
        uint32_t found = UINT32_MAX;
        for (uint32_t i = 0; i < flags.size() && i < 32; i++) {
            uint32_t f = flags[i];
            if (!(allowed & (1u << i)) || (f & must) != must || (f & (must_not | AVOID))) continue;
            if ((f & prefer) == prefer) return i;
            if (found == UINT32_MAX) found = i;
        }
        return found;
    };
    MemoryChoice c;
    bool unified = device_type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU || device_type == VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (unified && unified_allowed) {
        c.field = pick(field_allowed, DL | HV | HC, 0, CA);
        if (c.field != UINT32_MAX) {
            c.mapped = true;
            return c;
        }
    }
    c.field = pick(field_allowed, DL, HV, 0);  // device-local, not host-visible: never BAR
    if (c.field == UINT32_MAX) c.field = pick(field_allowed, DL, 0, 0);
    if (c.field == UINT32_MAX) c.field = pick(field_allowed, 0, 0, 0);
    c.staging = pick(staging_allowed, HV | HC, DL, CA);
    if (c.staging == UINT32_MAX) c.staging = pick(staging_allowed, HV | HC, 0, CA);
    return c;
}

// One piece of device memory a buffer is bound to: a range of a block (many small buffers share
// one vkAllocateMemory: devices allow maxMemoryAllocationCount allocations at once, 4,096 on
// SwiftShader and most GPUs), or a dedicated allocation (large buffers).
struct Allocation {
    VkDeviceMemory mem = VK_NULL_HANDLE;
    VkDeviceSize offset = 0, size = 0;
    char* ptr = nullptr;  // the host address of `offset` (host-visible memory: mapped once)
    int block = -1;       // Allocator::blocks index; -1: dedicated
};

// Sub-allocates buffers of up to `small` bytes from blocks of `block_size` bytes (first fit,
// free ranges merged on release; an emptied block is freed unless it is its type's only empty
// one); larger buffers get an allocation of their own. Each vkAllocateMemory is checked against
// the heap's budget (VK_EXT_memory_budget) and the allocation count first, and its VkResult
// after: running out is an OutOfMemory error, never a crash. Thread-safe (helper devices
// allocate on their own thread).
struct Allocator {
    VkDevice dev = VK_NULL_HANDLE;
    VkPhysicalDevice phys = VK_NULL_HANDLE;
    bool has_budget = false;
    uint32_t max_count = 4096;  // maxMemoryAllocationCount
    uint32_t live = 0;          // vkDeviceMemory objects held now (blocks and dedicated)
    VkDeviceSize block_size = VkDeviceSize(16) << 20, small = VkDeviceSize(1) << 20;
    static constexpr uint32_t kSpare = 4;  // allocations left for others (indirect arguments)
    struct Block {
        VkDeviceMemory mem = VK_NULL_HANDLE;
        uint32_t type = 0;
        VkDeviceSize size = 0, used = 0;
        char* ptr = nullptr;
        std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> size
    };
    std::vector<std::unique_ptr<Block>> blocks;  // null: a freed block's slot
    std::map<VkDeviceMemory, uint32_t> dedicated;
    std::mutex m;
    bool closed = false;

    static VkDeviceSize up(VkDeviceSize x, VkDeviceSize a) { return (x + a - 1) / a * a; }

    VkDeviceMemory raw(uint32_t type, VkDeviceSize size, char** ptr)
    {
        if (live + kSpare >= max_count)
            throw OutOfMemory("this device allows " + std::to_string(max_count) +
                              " memory allocations at once (maxMemoryAllocationCount) and vkdiff holds " +
                              std::to_string(live));
        VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
        VkPhysicalDeviceMemoryProperties2 mp2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
        if (has_budget) mp2.pNext = &budget;
        vkGetPhysicalDeviceMemoryProperties2(phys, &mp2);
        const auto& mp = mp2.memoryProperties;
        uint32_t h = mp.memoryTypes[type].heapIndex;
        if (has_budget && budget.heapUsage[h] + size > budget.heapBudget[h])
            throw OutOfMemory("device memory heap " + std::to_string(h) + " would exceed its budget: " +
                              std::to_string(budget.heapUsage[h]) + " bytes in use + " + std::to_string(size) +
                              " requested > budget " + std::to_string(budget.heapBudget[h]));
        VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.allocationSize = size;
        mai.memoryTypeIndex = type;
        VkDeviceMemory mem = VK_NULL_HANDLE;
        VkResult r = vkAllocateMemory(dev, &mai, nullptr, &mem);
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
            throw OutOfMemory("vkAllocateMemory of " + std::to_string(size) + " bytes failed: " +
                              vk::to_string(vk::Result(r)));
        check(r, "vkAllocateMemory");
        live++;
        *ptr = nullptr;
        if (mp.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
            void* p = nullptr;
            r = vkMapMemory(dev, mem, 0, VK_WHOLE_SIZE, 0, &p);
            if (r != VK_SUCCESS) {
                vkFreeMemory(dev, mem, nullptr);
                live--;
                if (r == VK_ERROR_MEMORY_MAP_FAILED || r == VK_ERROR_OUT_OF_HOST_MEMORY)
                    throw OutOfMemory("vkMapMemory of " + std::to_string(size) + " bytes failed: " +
                                      vk::to_string(vk::Result(r)));
                check(r, "vkMapMemory");
            }
            *ptr = static_cast<char*>(p);
        }
        return mem;
    }

    Allocation allocate(uint32_t type, VkDeviceSize size, VkDeviceSize align)
    {
        std::lock_guard<std::mutex> lock(m);
        if (closed) fail("this vkdiff Device is closed");
        Allocation a;
        if (size > small) {
            a.mem = raw(type, size, &a.ptr);
            a.size = size;
            dedicated[a.mem] = type;
            return a;
        }
        size = up(size, align);
        auto carve = [&](int k) {
            Block& b = *blocks[k];
            for (auto it = b.free.begin(); it != b.free.end(); ++it) {
                VkDeviceSize start = it->first, len = it->second, off = up(start, align);
                if (off + size > start + len) continue;
                b.free.erase(it);
                if (off > start) b.free[start] = off - start;
                if (off + size < start + len) b.free[off + size] = start + len - off - size;
                b.used += size;
                a.mem = b.mem;
                a.offset = off;
                a.size = size;
                a.ptr = b.ptr ? b.ptr + off : nullptr;
                a.block = k;
                return true;
            }
            return false;
        };
        for (int k = 0; k < int(blocks.size()); k++)
            if (blocks[k] && blocks[k]->type == type && carve(k)) return a;
        auto b = std::make_unique<Block>();
        b->type = type;
        b->size = block_size;
        b->mem = raw(type, block_size, &b->ptr);
        b->free[0] = block_size;
        int k = 0;
        while (k < int(blocks.size()) && blocks[k]) k++;
        if (k == int(blocks.size())) blocks.emplace_back();
        blocks[k] = std::move(b);
        carve(k);
        return a;
    }

    void release(const Allocation& a)
    {
        std::lock_guard<std::mutex> lock(m);
        if (closed || a.mem == VK_NULL_HANDLE) return;
        if (a.block < 0) {
            dedicated.erase(a.mem);
            vkFreeMemory(dev, a.mem, nullptr);
            live--;
            return;
        }
        Block& b = *blocks[a.block];
        auto it = b.free.emplace(a.offset, a.size).first;
        auto next = std::next(it);
        if (next != b.free.end() && it->first + it->second == next->first) {
            it->second += next->second;
            b.free.erase(next);
        }
        if (it != b.free.begin()) {
            auto prev = std::prev(it);
            if (prev->first + prev->second == it->first) {
                prev->second += it->second;
                b.free.erase(it);
            }
        }
        b.used -= a.size;
        if (b.used) return;
        for (size_t k = 0; k < blocks.size(); k++)  // another empty block of this type: free this one
            if (int(k) != a.block && blocks[k] && blocks[k]->type == b.type && !blocks[k]->used) {
                vkFreeMemory(dev, b.mem, nullptr);
                live--;
                blocks[a.block].reset();
                return;
            }
    }

    void close()
    {
        std::lock_guard<std::mutex> lock(m);
        if (closed) return;
        closed = true;
        for (auto& b : blocks)
            if (b) vkFreeMemory(dev, b->mem, nullptr);
        for (auto& [mem, type] : dedicated) vkFreeMemory(dev, mem, nullptr);
        blocks.clear();
        dedicated.clear();
        live = 0;
    }
};

// kp::Tensor's private members that a PooledTensor sets (Expose: texel.hpp).
#define VKRT_TENSOR_MEMBER(Tag, T, name) \
    struct Tag { using type = T kp::Tensor::*; friend type member(Tag); }; \
    template struct Expose<Tag, &kp::Tensor::name>;
VKRT_TENSOR_MEMBER(TensorDeviceTag, std::shared_ptr<vk::Device>, mDevice)
VKRT_TENSOR_MEMBER(TensorPrimaryBufferTag, std::shared_ptr<vk::Buffer>, mPrimaryBuffer)
VKRT_TENSOR_MEMBER(TensorStagingBufferTag, std::shared_ptr<vk::Buffer>, mStagingBuffer)
VKRT_TENSOR_MEMBER(TensorStagingMemoryTag, std::shared_ptr<vk::DeviceMemory>, mStagingMemory)
VKRT_TENSOR_MEMBER(TensorFreePrimaryBufferTag, bool, mFreePrimaryBuffer)
VKRT_TENSOR_MEMBER(TensorFreeStagingBufferTag, bool, mFreeStagingBuffer)
#undef VKRT_TENSOR_MEMBER

// A kp::Tensor (what kp::Algorithm and the ops bind) whose buffers are bound to Allocations:
// made by copying a prototype whose own resources are gone (kp::Tensor's constructor always
// allocates), then given its buffers. kp destroys the buffers (mFree*Buffer), never the memory
// (mFree*Memory false); the destructor returns the ranges to the Allocator. Its kp type is
// eStorage so that kp neither maps nor unmaps it: mRawData is set here.
struct PooledTensor : kp::Tensor {
    std::shared_ptr<Allocator> alloc;
    Allocation primary, staging;

    explicit PooledTensor(const kp::Tensor& proto) : kp::Tensor(proto) {}
    ~PooledTensor() override
    {
        destroy();
        if (alloc) {
            alloc->release(primary);
            alloc->release(staging);
        }
    }
    // the buffer (kp destroys it) and the memory it is bound to (kp leaves it)
    void bind(bool is_staging, VkBuffer buf, VkDeviceMemory mem)
    {
        if (is_staging) {
            this->*member(TensorStagingBufferTag{}) = std::make_shared<vk::Buffer>(buf);
            this->*member(TensorFreeStagingBufferTag{}) = true;
            this->*member(TensorStagingMemoryTag{}) = std::make_shared<vk::DeviceMemory>(mem);
        } else {
            this->*member(TensorPrimaryBufferTag{}) = std::make_shared<vk::Buffer>(buf);
            this->*member(TensorFreePrimaryBufferTag{}) = true;
            this->*member(TensorMemoryTag{}) = std::make_shared<vk::DeviceMemory>(mem);
        }
    }
    void set(std::shared_ptr<vk::Device> dev, uint32_t words, void* raw)
    {
        this->*member(TensorDeviceTag{}) = std::move(dev);
        mTensorType = TensorTypes::eStorage;
        mDataType = TensorDataTypes::eUnsignedInt;
        mSize = words;
        mDataTypeMemorySize = 4;
        mRawData = raw;
    }
};

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
    MemoryChoice memory;  // the memory types of fields and staging copies (choose())
    bool texel_memory = false;  // may a texel-usage alias buffer bind field memory?
    VkDeviceSize align = 256;  // of every sub-allocation (texel aliases bind there too)
    std::shared_ptr<Allocator> alloc = std::make_shared<Allocator>();
    std::shared_ptr<kp::Tensor> proto;  // PooledTensor's prototype (no resources)
    std::mutex queue_mutex;  // vkQueueSubmit needs external synchronisation
    std::shared_mutex building;  // held shared while pipelines are made without the GIL; close() waits
    bool closed = false;
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
        std::lock_guard<std::mutex> lock(queue_mutex);
        seq.evalAsync();
        seq.evalAwait();
    }

    void start(kp::Sequence& seq)  // submit only; may run without the GIL
    {
        std::lock_guard<std::mutex> lock(queue_mutex);
        seq.evalAsync();
    }

    VkBuffer make_buffer(VkDeviceSize bytes, VkBufferUsageFlags usage, VkMemoryRequirements* req)
    {
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = bytes;
        bci.usage = usage;
        VkBuffer buf = VK_NULL_HANDLE;
        check(vkCreateBuffer(*device, &bci, nullptr, &buf), "vkCreateBuffer");
        vkGetBufferMemoryRequirements(*device, buf, req);
        return buf;
    }
    static constexpr VkBufferUsageFlags kFieldUsage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    static constexpr VkBufferUsageFlags kStagingUsage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

    // The memory types (choose_memory) and the allocator's settings, once the VkDevice exists.
    void choose(const DeviceFacts& facts, bool unified_allowed)
    {
        VkMemoryRequirements field, staging, texel;
        vkDestroyBuffer(*device, make_buffer(4, kFieldUsage, &field), nullptr);
        vkDestroyBuffer(*device, make_buffer(4, kStagingUsage, &staging), nullptr);
        vkDestroyBuffer(*device, make_buffer(4, VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT, &texel), nullptr);
        std::vector<uint32_t> flags;
        for (auto& [f, heap] : facts.memory_types) flags.push_back(f);
        memory = choose_memory(facts.device_type, flags, field.memoryTypeBits, staging.memoryTypeBits, unified_allowed);
        if (memory.field == UINT32_MAX) fail(facts.name + ": no memory type for storage buffers");
        if (!memory.mapped && memory.staging == UINT32_MAX)
            fail(facts.name + ": no host-visible coherent memory type for staging copies");
        mapped = memory.mapped;
        texel_memory = texel.memoryTypeBits & (1u << memory.field);
        align = std::max<VkDeviceSize>({256, field.alignment, staging.alignment, texel.alignment,
                                        limits.nonCoherentAtomSize, limits.minStorageBufferOffsetAlignment,
                                        limits.minTexelBufferOffsetAlignment});
        alloc->dev = *device;
        alloc->phys = *phys;
        alloc->has_budget = has_budget;
        alloc->max_count = limits.maxMemoryAllocationCount;
        alloc->block_size = std::min<VkDeviceSize>(alloc->block_size, max_alloc);
        alloc->small = alloc->block_size / 16;
        uint32_t zero = 0;  // the prototype: kp allocates for it; its resources go at once
        proto = std::make_shared<kp::Tensor>(phys, device, &zero, 1, 4, kp::Tensor::TensorDataTypes::eUnsignedInt,
                                             kp::Tensor::TensorTypes::eStorage);
        proto->destroy();
    }

    // A zeroed buffer of nbytes (rounded up to whole words); `allocated` receives the bytes of
    // device memory it holds (both of a staged one). Its memory: a range of a block shared with
    // other small buffers, or an allocation of its own (Allocator).
    std::shared_ptr<kp::Tensor> tensor(uint64_t nbytes, uint64_t* allocated = nullptr)
    {
        uint64_t words = (std::max<uint64_t>(nbytes, 1) + 3) / 4;
        if (words * 4 > max_alloc || words > UINT32_MAX)
            fail("cannot allocate a buffer of " + std::to_string(nbytes) +
                 " bytes: the device's largest allocation is " + std::to_string(max_alloc));
        VkDeviceSize bytes = words * 4;
        auto t = std::make_shared<PooledTensor>(*proto);
        t->alloc = alloc;
        t->set(device, uint32_t(words), nullptr);
        VkMemoryRequirements req;
        VkBuffer buf = make_buffer(bytes, kFieldUsage, &req);
        t->bind(false, buf, VK_NULL_HANDLE);
        t->primary = alloc->allocate(memory.field, req.size, std::max(req.alignment, align));
        t->bind(false, buf, t->primary.mem);
        check(vkBindBufferMemory(*device, buf, t->primary.mem, t->primary.offset), "vkBindBufferMemory");
        if (!mapped) {
            buf = make_buffer(bytes, kStagingUsage, &req);
            t->bind(true, buf, VK_NULL_HANDLE);
            t->staging = alloc->allocate(memory.staging, req.size, std::max(req.alignment, align));
            t->bind(true, buf, t->staging.mem);
            check(vkBindBufferMemory(*device, buf, t->staging.mem, t->staging.offset), "vkBindBufferMemory");
        }
        char* host = mapped ? t->primary.ptr : t->staging.ptr;
        if (!host) fail("a Buffer's host-visible memory is not mapped");
        std::memset(host, 0, bytes);
        t->set(device, uint32_t(words), host);
        if (allocated) *allocated = t->primary.size + t->staging.size;
        track(tensors, std::shared_ptr<kp::Tensor>(t));
        if (!mapped) {  // zero the device-local side as well
            auto seq = sequence();
            seq->record(std::make_shared<OpFill>(t, 0, bytes, 0u));
            seq->record(host_barrier);
            run(*seq);
            seq->destroy();
        }
        return t;
    }

    // The memory requirements of a field buffer of `bytes`.
    VkMemoryRequirements requirements(uint64_t bytes)
    {
        VkMemoryRequirements req;
        vkDestroyBuffer(*device, make_buffer(bytes, kFieldUsage, &req), nullptr);
        return req;
    }

    void close()
    {
        if (closed) return;
        closed = true;
        if (!device) return;
        std::unique_lock<std::shared_mutex> wait_builds(building);
        std::lock_guard<std::mutex> lock(queue_mutex);
        vkDeviceWaitIdle(*device);
        for (auto& w : seqs) if (auto s = w.lock()) s->destroy();
        for (auto& w : algos) if (auto a = w.lock()) a->destroy();
        for (auto& w : texel_algos) if (auto a = w.lock()) a->destroy();
        for (auto& w : texel_views) if (auto v = w.lock()) v->destroy();
        for (auto& w : tensors) if (auto t = w.lock()) t->destroy();
        if (proto) proto->destroy();
        alloc->close();  // the memory of every Buffer (kp destroyed their VkBuffers)
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
