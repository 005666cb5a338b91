// vkdiff.runtime._vkrt: vkdiff's narrow Vulkan runtime, a pybind11 module on
// Kompute's (kp 0.9.0) C++ API.
//
// Why it exists: kp's Python API creates its VkDevice with no optional
// features (no float atomics, Float64, Int64), so shaders using them break
// VUID-RuntimeSpirv-None-06280, and it records no compute->compute barrier
// between dispatches, so dependent dispatches are SYNC-HAZARDs. Here we create
// the VkInstance and VkDevice ourselves, with every optional feature the device
// offers, hand them to kp::Manager, and record exactly the barriers the Python
// layer asks for (Batch.barrier), plus one to the host at the end of a submit.
//
// Python objects: Device (holds a Ctx: instance, device, queue, kp::Manager),
// Buffer (kp::Tensor), Algorithm (kp::Algorithm: pipeline + descriptor set),
// Batch (kp::Sequence: dispatches, barriers, fills and copies).
//
// Buffer memory. Where the host-visible coherent memory Kompute maps for a
// kp::Tensor eHost is device-local too (unified memory: CPU drivers such as
// lavapipe, integrated GPUs), a Buffer is that one buffer, persistently mapped:
// the host reads and writes the memory the shaders use, with no staging copy
// and no copy commands (feature "unified_memory"; disable=["unified_memory"]
// turns it off). Elsewhere (discrete GPUs: there the first host-visible type is
// system memory, and host reads through a BAR are uncached) a Buffer is a
// kp::Tensor eDevice: a device-local buffer plus a mapped host-visible staging
// copy, moved by Batch.upload / Batch.download.
//
// Every object holds the Ctx, so the VkDevice outlives them; Device.close()
// tears everything down at once.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <kompute/Manager.hpp>

#include <algorithm>
#include <condition_variable>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>

namespace py = pybind11;

namespace {

const char* const kNoDevice =
  "no Vulkan device found: install a Vulkan driver, e.g. `apt-get install "
  "mesa-vulkan-drivers` for the CPU driver lavapipe";
const std::vector<std::string> kFeatureNames = {
    "float32_atomic_add", "float32_atomic_minmax", "float64", "int64",
    "float64_atomic_add", "int64_atomics", "subgroup_basic", "subgroup_vote",
    "subgroup_arithmetic", "subgroup_ballot", "subgroup_shuffle",
    "float_controls_preserve32", "float_controls_preserve64", "unified_memory", "texel_reads"};

[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error(msg); }

// A device or host allocation failed, or would exceed the heap's budget:
// Python's _vkrt.OutOfMemoryError, a MemoryError. Nothing is left allocated.
struct OutOfMemory : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check(VkResult r, const char* what)
{
    if (r != VK_SUCCESS)
        fail(std::string(what) + " failed: " + vk::to_string(vk::Result(r)));
}

std::string version_string(uint32_t v)
{
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." +
           std::to_string(VK_API_VERSION_MINOR(v)) + "." +
           std::to_string(VK_API_VERSION_PATCH(v));
}

// The process's VkInstance, shared by all Devices (and list_devices) alive at
// once, at the highest API version the loader offers up to 1.3 (1.1 at least).
// Shared because the validation layer reads its settings once per process and
// opens its log file with mode "w" in every new instance: two live instances
// would overwrite each other's log.
struct Instance {
    VkInstance handle = VK_NULL_HANDLE;
    uint32_t api = 0;
    ~Instance() { vkDestroyInstance(handle, nullptr); }
};
std::weak_ptr<Instance> g_instance;  // guarded by the GIL

std::shared_ptr<Instance> shared_instance()
{
    if (auto inst = g_instance.lock()) return inst;
    uint32_t api = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion(&api) != VK_SUCCESS || api < VK_API_VERSION_1_1)
        fail("the Vulkan loader offers only Vulkan " + version_string(api) +
             "; vkdiff needs 1.1 or newer");
    api = std::min<uint32_t>(api, VK_API_VERSION_1_3);
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = app.pEngineName = "vkdiff";
    app.apiVersion = api;
    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.pApplicationInfo = &app;
    auto inst = std::make_shared<Instance>();
    VkResult r = vkCreateInstance(&ci, nullptr, &inst->handle);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) fail(kNoDevice);
    if (r == VK_ERROR_LAYER_NOT_PRESENT)
        fail("a Vulkan layer named in VK_INSTANCE_LAYERS is not installed (for "
             "validation: `apt-get install vulkan-validationlayers`)");
    check(r, "vkCreateInstance");
    inst->api = api;
    g_instance = inst;
    // The validation layer opens its log file in each VkInstance and never
    // closes it: with the layer on, the process keeps one instance for good
    // (deliberately never destroyed), so ti.init() cycles leak no handles.
    const char* layers = std::getenv("VK_INSTANCE_LAYERS");
    if (layers && std::strstr(layers, "VK_LAYER_KHRONOS_validation")) {
        static auto* pinned = new std::shared_ptr<Instance>();
        *pinned = inst;
    }
    return inst;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance inst)
{
    uint32_t n = 0;
    check(vkEnumeratePhysicalDevices(inst, &n, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devs(n);
    check(vkEnumeratePhysicalDevices(inst, &n, devs.data()), "vkEnumeratePhysicalDevices");
    devs.resize(n);
    return devs;
}

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

using Stage = vk::PipelineStageFlagBits;
using Access = vk::AccessFlagBits;

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

struct PyDevice;

struct PyBuffer {
    std::shared_ptr<Ctx> ctx;  // declared first: destroyed last
    std::shared_ptr<kp::Tensor> t;
    uint64_t nbytes = 0;
    uint64_t allocated = 0;  // bytes of device memory held (staged: both allocations)
    bool mapped = false;  // one buffer, its memory mapped: upload/download are no-ops
    std::map<int, std::shared_ptr<TexelView>> views;  // by VkFormat (destroyed before t)

    std::shared_ptr<TexelView> texel_view(int format)
    {
        auto& v = views[format];
        if (v) return v;
        VkDevice dev = *ctx->device;
        auto tv = std::make_shared<TexelView>();
        tv->dev = dev;
        VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = t->memorySize();
        bci.usage = VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT;
        check(vkCreateBuffer(dev, &bci, nullptr, &tv->buf), "vkCreateBuffer (texel view)");
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(dev, tv->buf, &req);
        if (req.size > ctx->requirements(bci.size).size)
            fail("texel view: the alias buffer needs more memory than the Buffer holds");
        const vk::DeviceMemory& mem = *((*t).*member(TensorMemoryTag{}));
        check(vkBindBufferMemory(dev, tv->buf, static_cast<VkDeviceMemory>(mem), 0), "vkBindBufferMemory (texel view)");
        VkBufferViewCreateInfo vci{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
        vci.buffer = tv->buf;
        vci.format = VkFormat(format);
        vci.range = VK_WHOLE_SIZE;
        check(vkCreateBufferView(dev, &vci, nullptr, &tv->view), "vkCreateBufferView");
        ctx->track(ctx->texel_views, tv);
        v = tv;
        return v;
    }
};

struct PyAlgorithm {
    std::shared_ptr<Ctx> ctx;
    std::shared_ptr<kp::Algorithm> algo;
    std::shared_ptr<TexelAlgo> own;  // with texel bindings: instead of algo
    uint32_t push_bytes = 0;  // as declared by the caller (0 allowed)
};

struct PyBatch {
    std::shared_ptr<Ctx> ctx;
    std::shared_ptr<kp::Sequence> seq;  // created on first record after a submit
    const void* bound = nullptr;  // pipeline bound last in this command buffer
    size_t pending = 0;
    bool busy = false;  // a submit is running without the GIL

    kp::Sequence& recording()
    {
        ctx->check_open();
        if (busy) fail("this Batch is being submitted by another thread");
        if (!seq) seq = ctx->sequence();
        return *seq;
    }
    void copy(PyBuffer& b, bool to_device)
    {
        if (b.ctx != ctx) fail("Buffer belongs to another Device");
        if (b.mapped) {  // the host already reads and writes the device's memory
            ctx->check_open();
            return;
        }
        recording().record(std::make_shared<OpCopy>(b.t, to_device));
        pending++;
    }
    void dispatch(PyAlgorithm& a, long long groups_x, py::handle push)
    {
        if (a.ctx != ctx) fail("Algorithm belongs to another Device");
        if (groups_x < 0 || groups_x > ctx->limits.maxComputeWorkGroupCount[0])
            fail("groups_x=" + std::to_string(groups_x) + " is outside [0, " +
                 std::to_string(ctx->limits.maxComputeWorkGroupCount[0]) + "]");
        char* data = nullptr;
        Py_ssize_t len = 0;
        py::buffer_info info;
        if (PyBytes_Check(push.ptr())) {
            PyBytes_AsStringAndSize(push.ptr(), &data, &len);
        } else {
            info = py::reinterpret_borrow<py::buffer>(push).request();
            data = static_cast<char*>(info.ptr);
            len = info.size * info.itemsize;
        }
        if (uint64_t(len) != a.push_bytes)
            fail("dispatch: push constants are " + std::to_string(len) +
                 " bytes but the Algorithm was made for " + std::to_string(a.push_bytes));
        kp::Sequence& s = recording();
        auto op = std::make_shared<OpDispatch>();
        op->algo = a.algo;
        op->own = a.own;
        const void* key = a.own ? static_cast<const void*>(a.own.get()) : a.algo.get();
        op->bind = bound != key;
        op->groups_x = uint32_t(groups_x);
        op->push = data;
        op->push_bytes = uint32_t(len);
        s.record(op);
        bound = key;
        pending++;
    }
    // Record vkCmdFillBuffer of `size` bytes at `offset` with the 32-bit `word` (both
    // multiples of 4, within the Buffer's nbytes rounded up to 4).
    void fill(PyBuffer& b, long long offset, long long size, uint32_t word)
    {
        if (b.ctx != ctx) fail("Buffer belongs to another Device");
        check_range("fill", b, offset, size);
        recording().record(std::make_shared<OpFill>(b.t, vk::DeviceSize(offset), vk::DeviceSize(size), word));
        pending++;
    }
    // Record vkCmdCopyBuffer of `size` bytes from src at src_offset to dst at dst_offset.
    void copy_region(PyBuffer& src, PyBuffer& dst, long long src_offset, long long dst_offset, long long size)
    {
        if (src.ctx != ctx || dst.ctx != ctx) fail("Buffer belongs to another Device");
        check_range("copy", src, src_offset, size);
        check_range("copy", dst, dst_offset, size);
        if (&src == &dst && src_offset < dst_offset + size && dst_offset < src_offset + size)
            fail("copy: the source and destination ranges overlap");
        recording().record(std::make_shared<OpCopyRegion>(
          src.t, dst.t, vk::BufferCopy(vk::DeviceSize(src_offset), vk::DeviceSize(dst_offset), vk::DeviceSize(size))));
        pending++;
    }
    static void check_range(const char* what, const PyBuffer& b, long long offset, long long size)
    {
        uint64_t cap = (b.nbytes + 3) / 4 * 4;
        if (offset < 0 || size <= 0 || offset % 4 || size % 4 || uint64_t(offset) + uint64_t(size) > cap)
            fail(std::string(what) + ": offset " + std::to_string(offset) + " and size " + std::to_string(size) +
                 " must be positive multiples of 4 within the buffer's " + std::to_string(cap) + " bytes");
    }
    // Record `a` dispatched with the workgroup count in `geometry`'s first three uint32
    // (written by an earlier command: a geometry task), through OpDispatchIndirect.
    void dispatch_indirect(PyAlgorithm& a, PyBuffer& geometry, py::handle push)
    {
        if (a.ctx != ctx || geometry.ctx != ctx) fail("dispatch_indirect: an object belongs to another Device");
        if (geometry.nbytes < 12) fail("dispatch_indirect: the geometry Buffer holds less than 12 bytes");
        py::buffer_info info = py::reinterpret_borrow<py::buffer>(push).request();
        Py_ssize_t len = info.size * info.itemsize;
        if (uint64_t(len) != a.push_bytes)
            fail("dispatch_indirect: push constants are " + std::to_string(len) +
                 " bytes but the Algorithm was made for " + std::to_string(a.push_bytes));
        kp::Sequence& s = recording();
        if (ctx->indirect.buf == VK_NULL_HANDLE) ctx->indirect.create(*ctx->phys, *ctx->device);
        auto op = std::make_shared<OpDispatchIndirect>();
        op->algo = a.algo;
        op->own = a.own;
        const void* key = a.own ? static_cast<const void*>(a.own.get()) : a.algo.get();
        op->geometry = geometry.t;
        op->args = ctx->indirect.buf;
        op->bind = bound != key;
        op->push = info.ptr;
        op->push_bytes = uint32_t(len);
        s.record(op);
        bound = key;
        pending++;
    }
    void barrier()
    {
        recording().record(ctx->barrier);
        pending++;
    }
    // Submissions not yet waited for, oldest first (submit(wait=False)); at most kMaxInflight:
    // the host records the next commands while the device runs these.
    std::deque<std::shared_ptr<kp::Sequence>> inflight;
    static constexpr size_t kMaxInflight = 2;

    // Submit what is recorded. wait=True: then wait for it and every earlier submission (the
    // host may read what they wrote). wait=False: return once it is queued; a later
    // submit(wait=True) or wait() waits for it. Barriers between commands of different
    // submissions are the caller's, as within one (Batch.barrier); each submission ends with
    // a barrier to the host.
    void submit(bool wait)
    {
        ctx->check_open();
        if (busy) fail("this Batch is being submitted by another thread");
        if (!seq || !pending) {
            if (wait) this->wait();
            return;
        }
        std::shared_ptr<kp::Sequence> s = std::move(seq);
        bound = nullptr;
        pending = 0;
        s->record(ctx->host_barrier);
        busy = true;
        try {
            py::gil_scoped_release nogil;
            while (!wait && inflight.size() >= kMaxInflight) await_oldest();
            try {
                ctx->start(*s);
            } catch (...) {
                s->destroy();
                throw;
            }
            inflight.push_back(s);
            while (wait && !inflight.empty()) await_oldest();
        } catch (...) {
            busy = false;
            abandon();
            throw;
        }
        busy = false;
    }

    void wait()
    {
        ctx->check_open();
        if (busy) fail("this Batch is being submitted by another thread");
        busy = true;
        try {
            py::gil_scoped_release nogil;
            while (!inflight.empty()) await_oldest();
        } catch (...) {
            busy = false;
            abandon();
            throw;
        }
        busy = false;
    }

    void await_oldest()
    {
        std::shared_ptr<kp::Sequence> s = inflight.front();
        s->evalAwait();
        inflight.pop_front();
        // kp's command pool lacks RESET_COMMAND_BUFFER, so a used command
        // buffer cannot be begun again: the next record makes a new Sequence.
        s->destroy();
    }

    void abandon()  // after an error: nothing may still run when the sequences are freed
    {
        if (!inflight.empty() && !ctx->closed) vkQueueWaitIdle(*ctx->queue);
        for (auto& s : inflight) s->destroy();
        inflight.clear();
    }

    ~PyBatch()
    {
        try {
            if (!ctx->closed)
                while (!inflight.empty()) await_oldest();
        } catch (...) {
            abandon();
        }
    }
};

struct Prewarmer;

struct PyDevice {
    std::shared_ptr<Ctx> ctx;
    std::string name, api_version;
    uint32_t driver_version = 0, vendor_id = 0, subgroup_size = 0;
    std::map<std::string, bool> features;
    std::map<std::string, uint64_t> limits;
    int index = 0;
    std::vector<std::string> disabled;
    std::unique_ptr<Prewarmer> prewarmer;  // made by the first prewarm()

    ~PyDevice();
    void close();
    void stop_prewarm();
    void prewarm(const std::vector<py::tuple>& items);

    // `inst`: the shared VkInstance (given: a helper device made on another thread, without
    // the GIL that guards shared_instance()).
    PyDevice(int index, const std::vector<std::string>& disable, std::shared_ptr<Instance> inst = nullptr)
      : disabled(disable)
    {
        for (auto& d : disable)
            if (std::find(kFeatureNames.begin(), kFeatureNames.end(), d) == kFeatureNames.end())
                fail("Device(disable=...): unknown feature '" + d + "'");
        auto off = [&](const char* n) { return std::find(disable.begin(), disable.end(), n) != disable.end(); };
        if (const char* env = std::getenv("VKDIFF_DEVICE"); env && *env) {
            char* end = nullptr;
            index = int(std::strtol(env, &end, 10));
            if (*end) fail(std::string("VKDIFF_DEVICE='") + env + "' is not a device index");
        }
        this->index = index;
        ctx = std::make_shared<Ctx>();
        ctx->closed = true;  // until the VkDevice exists
        ctx->owner = inst ? std::move(inst) : shared_instance();
        ctx->instance = std::make_shared<vk::Instance>(ctx->owner->handle);
        create(ctx->owner->handle, ctx->owner->api, index, off);
    }

    template<class Off>
    void create(VkInstance inst, uint32_t inst_api, int index, Off off)
    {
        auto devs = physical_devices(inst);
        if (devs.empty()) fail(kNoDevice);
        if (index < 0 || size_t(index) >= devs.size())
            fail("Vulkan device index " + std::to_string(index) + " out of range: " +
                 std::to_string(devs.size()) + " device(s) found");
        vk::PhysicalDevice pd(devs[index]);

        vk::PhysicalDeviceSubgroupProperties sub;
        vk::PhysicalDeviceMaintenance3Properties m3;
        m3.pNext = &sub;
        vk::PhysicalDeviceProperties2 props2;
        props2.pNext = &m3;
        pd.getProperties2(&props2);
        const auto& props = props2.properties;
        uint32_t api = std::min(inst_api, props.apiVersion);
        if (api < VK_API_VERSION_1_1)
            fail(std::string(props.deviceName.data()) + " supports only Vulkan " +
                 version_string(props.apiVersion) + "; vkdiff needs 1.1");
        // Vulkan 1.2 float controls: may shaders declare SignedZeroInfNanPreserve (so the
        // driver keeps inf, NaN and the sign of zero instead of fast-math folding x - x to 0)?
        bool fc32 = false, fc64 = false;
        if (api >= VK_API_VERSION_1_2) {
            vk::PhysicalDeviceFloatControlsProperties fc;
            vk::PhysicalDeviceProperties2 p2;
            p2.pNext = &fc;
            pd.getProperties2(&p2);
            fc32 = fc.shaderSignedZeroInfNanPreserveFloat32;
            fc64 = fc.shaderSignedZeroInfNanPreserveFloat64;
        }
        name = props.deviceName.data();
        api_version = version_string(props.apiVersion);
        driver_version = props.driverVersion;
        vendor_id = props.vendorID;
        subgroup_size = sub.subgroupSize;
        ctx->limits = props.limits;
        ctx->max_alloc = m3.maxMemoryAllocationSize;

        std::vector<const char*> exts;
        auto offered = pd.enumerateDeviceExtensionProperties();
        auto want = [&](const char* e) {
            for (auto& p : offered)
                if (std::strcmp(p.extensionName.data(), e) == 0) { exts.push_back(e); return true; }
            return false;
        };
        Features f;
        f.has_v12 = api >= VK_API_VERSION_1_2;
        f.has_v13 = api >= VK_API_VERSION_1_3;
        f.has_af = want(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
        f.has_af2 = f.has_af && want(VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
        f.has_ai64 = want(VK_KHR_SHADER_ATOMIC_INT64_EXTENSION_NAME) && !f.has_v12;
        ctx->has_budget = want(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
        f.link();
        pd.getFeatures2(&f.f2);

        // Enable all that is offered, except robustness (costly, unused), less `disable`.
        auto& core = f.f2.features;
        core.robustBufferAccess = false;
        f.v13.robustImageAccess = false;
        if (off("float32_atomic_add")) f.af.shaderBufferFloat32AtomicAdd = f.af.shaderSharedFloat32AtomicAdd = false;
        if (off("float32_atomic_minmax")) f.af2.shaderBufferFloat32AtomicMinMax = f.af2.shaderSharedFloat32AtomicMinMax = false;
        if (off("float64")) core.shaderFloat64 = false;
        if (off("int64")) core.shaderInt64 = false;
        if (off("float64_atomic_add") || !core.shaderFloat64)
            f.af.shaderBufferFloat64AtomicAdd = f.af.shaderSharedFloat64AtomicAdd = false;
        if (off("int64_atomics") || !core.shaderInt64) f.int64_atomics() = f.int64_shared_atomics() = false;

        features["float32_atomic_add"] = f.has_af && f.af.shaderBufferFloat32AtomicAdd;
        features["float32_atomic_minmax"] = f.has_af2 && f.af2.shaderBufferFloat32AtomicMinMax;
        features["float64"] = core.shaderFloat64;
        features["int64"] = core.shaderInt64;
        features["float64_atomic_add"] = f.has_af && f.af.shaderBufferFloat64AtomicAdd;
        features["int64_atomics"] = (f.has_v12 || f.has_ai64) && f.int64_atomics();
        features["float_controls_preserve32"] = fc32 && !off("float_controls_preserve32");
        features["float_controls_preserve64"] = fc64 && core.shaderFloat64 && !off("float_controls_preserve64");
        bool compute = bool(sub.supportedStages & vk::ShaderStageFlagBits::eCompute);
        auto sg = [&](const char* n, vk::SubgroupFeatureFlagBits bit) {
            features[n] = compute && !off(n) && bool(sub.supportedOperations & bit);
        };
        sg("subgroup_basic", vk::SubgroupFeatureFlagBits::eBasic);
        sg("subgroup_vote", vk::SubgroupFeatureFlagBits::eVote);
        sg("subgroup_arithmetic", vk::SubgroupFeatureFlagBits::eArithmetic);
        sg("subgroup_ballot", vk::SubgroupFeatureFlagBits::eBallot);
        sg("subgroup_shuffle", vk::SubgroupFeatureFlagBits::eShuffle);

        auto families = pd.getQueueFamilyProperties();
        uint32_t family = UINT32_MAX;
        for (uint32_t i = 0; i < families.size() && family == UINT32_MAX; i++)
            if (families[i].queueFlags & vk::QueueFlagBits::eCompute) family = i;
        if (family == UINT32_MAX) fail(name + " has no compute queue");
        float priority = 1.0f;
        VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        qci.queueFamilyIndex = family;
        qci.queueCount = 1;
        qci.pQueuePriorities = &priority;
        f.link();
        VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
        dci.pNext = &f.f2;
        dci.queueCreateInfoCount = 1;
        dci.pQueueCreateInfos = &qci;
        dci.enabledExtensionCount = uint32_t(exts.size());
        dci.ppEnabledExtensionNames = exts.data();
        VkDevice dev = VK_NULL_HANDLE;
        check(vkCreateDevice(pd, &dci, nullptr, &dev), "vkCreateDevice");
        VkQueue q = VK_NULL_HANDLE;
        vkGetDeviceQueue(dev, family, 0, &q);

        ctx->phys = std::make_shared<vk::PhysicalDevice>(pd);
        ctx->device = std::make_shared<vk::Device>(dev);
        ctx->queue = std::make_shared<vk::Queue>(q);
        ctx->family = family;
        ctx->mgr = std::make_shared<kp::Manager>(ctx->instance, ctx->phys, ctx->device);
        ctx->closed = false;
        ctx->mapped = !off("unified_memory") && ctx->host_memory_is_device_local();
        features["unified_memory"] = ctx->mapped;
        // texel reads: every format codegen reads through a storage texel buffer view
        bool texel = !off("texel_reads");
        for (VkFormat fmt : {VK_FORMAT_R32_SFLOAT, VK_FORMAT_R32G32_SFLOAT, VK_FORMAT_R32G32B32A32_SFLOAT,
                             VK_FORMAT_R32_SINT, VK_FORMAT_R32_UINT}) {
            VkFormatProperties fp;
            vkGetPhysicalDeviceFormatProperties(pd, fmt, &fp);
            texel = texel && (fp.bufferFeatures & VK_FORMAT_FEATURE_STORAGE_TEXEL_BUFFER_BIT);
        }
        features["texel_reads"] = texel;

        const auto& l = props.limits;
        limits = {{"max_workgroup_count_x", l.maxComputeWorkGroupCount[0]},
                  {"max_workgroup_size_x", l.maxComputeWorkGroupSize[0]},
                  {"max_workgroup_invocations", l.maxComputeWorkGroupInvocations},
                  {"max_storage_buffer_range", l.maxStorageBufferRange},
                  {"max_push_constants_size", l.maxPushConstantsSize},
                  {"max_storage_buffers_per_stage", std::min(l.maxPerStageDescriptorStorageBuffers,
                                                             l.maxDescriptorSetStorageBuffers)},
                  {"max_shared_memory_size", l.maxComputeSharedMemorySize},
                  {"max_texel_buffer_elements", l.maxTexelBufferElements},
                  {"max_storage_texel_buffers_per_stage", std::min(l.maxPerStageDescriptorStorageImages,
                                                                   l.maxDescriptorSetStorageImages)}};
    }

    std::shared_ptr<PyBuffer> buffer(long long nbytes)
    {
        ctx->check_open();
        if (nbytes < 0) fail("buffer size must be >= 0");
        auto b = std::make_shared<PyBuffer>();
        b->ctx = ctx;
        b->t = ctx->tensor(uint64_t(nbytes), &b->allocated);
        b->nbytes = uint64_t(nbytes);
        b->mapped = ctx->mapped;
        return b;
    }

    // bindings 0..n-1: the storage buffers; n + j: a storage texel buffer view (format
    // texels[j].second, a VkFormat) of buffers[texels[j].first]
    std::shared_ptr<TexelAlgo> texel_algorithm(const std::vector<std::shared_ptr<PyBuffer>>& buffers,
                                               const std::vector<std::shared_ptr<kp::Tensor>>& tensors,
                                               const std::vector<std::pair<long long, int>>& texels,
                                               const std::vector<uint32_t>& words, uint32_t push_range)
    {
        if (!features["texel_reads"]) fail("algorithm: texel views need the feature texel_reads");
        if (texels.size() > ctx->limits.maxPerStageDescriptorStorageImages)
            fail("algorithm: more texel views than the device's maxPerStageDescriptorStorageImages");
        auto o = std::make_shared<TexelAlgo>();
        VkDevice dev = *ctx->device;
        o->dev = dev;
        o->tensors = tensors;
        o->push_range = push_range;
        for (auto& [k, fmt] : texels) {
            if (k < 0 || size_t(k) >= buffers.size())
                fail("algorithm: texel view of buffer " + std::to_string(k) + ", not one of the buffers");
            o->views.push_back(buffers[k]->texel_view(fmt));
        }
        std::vector<VkDescriptorSetLayoutBinding> lb;
        for (uint32_t i = 0; i < tensors.size() + texels.size(); i++)
            lb.push_back({i, i < tensors.size() ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER,
                          1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
        VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        li.bindingCount = uint32_t(lb.size());
        li.pBindings = lb.data();
        check(vkCreateDescriptorSetLayout(dev, &li, nullptr, &o->dsl), "vkCreateDescriptorSetLayout");
        VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_range};
        VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        pli.setLayoutCount = 1;
        pli.pSetLayouts = &o->dsl;
        pli.pushConstantRangeCount = 1;
        pli.pPushConstantRanges = &pcr;
        check(vkCreatePipelineLayout(dev, &pli, nullptr, &o->layout), "vkCreatePipelineLayout");
        VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        smi.codeSize = words.size() * 4;
        smi.pCode = words.data();
        check(vkCreateShaderModule(dev, &smi, nullptr, &o->module), "vkCreateShaderModule");
        VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        cpi.stage.module = o->module;
        cpi.stage.pName = "main";
        cpi.layout = o->layout;
        check(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, nullptr, &o->pipeline), "vkCreateComputePipelines");
        VkDescriptorPoolSize ps[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, uint32_t(tensors.size())},
                                      {VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, uint32_t(texels.size())}};
        VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        dpi.maxSets = 1;
        dpi.poolSizeCount = 2;
        dpi.pPoolSizes = ps;
        check(vkCreateDescriptorPool(dev, &dpi, nullptr, &o->pool), "vkCreateDescriptorPool");
        VkDescriptorSetAllocateInfo dsi{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        dsi.descriptorPool = o->pool;
        dsi.descriptorSetCount = 1;
        dsi.pSetLayouts = &o->dsl;
        check(vkAllocateDescriptorSets(dev, &dsi, &o->set), "vkAllocateDescriptorSets");
        std::vector<VkDescriptorBufferInfo> infos(tensors.size());
        std::vector<VkWriteDescriptorSet> writes;
        for (uint32_t i = 0; i < lb.size(); i++) {
            VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            w.dstSet = o->set;
            w.dstBinding = i;
            w.descriptorCount = 1;
            w.descriptorType = lb[i].descriptorType;
            if (i < tensors.size()) {
                vk::DescriptorBufferInfo bi = tensors[i]->constructDescriptorBufferInfo();
                infos[i] = static_cast<VkDescriptorBufferInfo>(bi);
                w.pBufferInfo = &infos[i];
            } else {
                w.pTexelBufferView = &o->views[i - tensors.size()]->view;
            }
            writes.push_back(w);
        }
        vkUpdateDescriptorSets(dev, uint32_t(writes.size()), writes.data(), 0, nullptr);
        ctx->track(ctx->texel_algos, o);
        return o;
    }

    // What one pipeline is made of, checked and copied while the GIL is held.
    struct AlgoSpec {
        std::vector<std::shared_ptr<kp::Tensor>> tensors;
        std::vector<uint32_t> words, push;
        uint32_t push_bytes = 0;
    };

    AlgoSpec spec(const std::vector<std::shared_ptr<PyBuffer>>& buffers, const py::bytes& spirv,
                  long long push_constant_bytes)
    {
        ctx->check_open();
        std::string code = spirv;
        if (code.size() < 20 || code.size() % 4 || *reinterpret_cast<const uint32_t*>(code.data()) != 0x07230203u)
            fail("algorithm: spirv is not a little-endian SPIR-V binary module");
        if (push_constant_bytes < 0 || push_constant_bytes % 4 ||
            push_constant_bytes > ctx->limits.maxPushConstantsSize)
            fail("algorithm: push_constant_bytes=" + std::to_string(push_constant_bytes) +
                 " must be a multiple of 4 in [0, " + std::to_string(ctx->limits.maxPushConstantsSize) + "]");
        AlgoSpec s;
        for (auto& b : buffers) {
            if (!b) fail("algorithm: buffers must not contain None");
            if (b->ctx != ctx) fail("algorithm: a Buffer belongs to another Device");
            if (b->t->memorySize() > ctx->limits.maxStorageBufferRange)
                fail("algorithm: a buffer of " + std::to_string(b->t->memorySize()) +
                     " bytes exceeds maxStorageBufferRange " + std::to_string(ctx->limits.maxStorageBufferRange));
            s.tensors.push_back(b->t);
        }
        if (s.tensors.empty()) {  // kp needs a descriptor; the shader ignores this one
            if (!ctx->dummy) ctx->dummy = ctx->tensor(4);
            s.tensors.push_back(ctx->dummy);
        }
        s.words.resize(code.size() / 4);
        std::memcpy(s.words.data(), code.data(), code.size());
        s.push.assign(std::max<long long>(push_constant_bytes, 4) / 4, 0);
        s.push_bytes = uint32_t(push_constant_bytes);
        return s;
    }

    // The pipeline (the driver compiles the shader here, or at the first dispatch), descriptor
    // set and layouts: Vulkan calls on objects of its own only, so several run at once.
    static std::shared_ptr<kp::Algorithm> build(const std::shared_ptr<vk::Device>& device, const AlgoSpec& s)
    {
        return std::make_shared<kp::Algorithm>(device, s.tensors, s.words, kp::Workgroup{1, 1, 1},
                                               std::vector<uint32_t>{}, s.push);
    }

    std::shared_ptr<PyAlgorithm> wrap(std::shared_ptr<kp::Algorithm> algo, uint32_t push_bytes)
    {
        auto a = std::make_shared<PyAlgorithm>();
        a->ctx = ctx;
        a->algo = std::move(algo);
        a->push_bytes = push_bytes;
        ctx->track(ctx->algos, a->algo);
        return a;
    }

    std::shared_ptr<PyAlgorithm> algorithm(const std::vector<std::shared_ptr<PyBuffer>>& buffers,
                                           const py::bytes& spirv, long long push_constant_bytes,
                                           const std::vector<std::pair<long long, int>>& texels)
    {
        AlgoSpec s = spec(buffers, spirv, push_constant_bytes);
        if (!texels.empty()) {  // a pipeline of our own (kp::Algorithm binds storage buffers only)
            auto a = std::make_shared<PyAlgorithm>();
            a->ctx = ctx;
            a->push_bytes = s.push_bytes;
            a->own = texel_algorithm(buffers, s.tensors, texels, s.words, uint32_t(s.push.size() * 4));
            return a;
        }
        std::shared_ptr<kp::Algorithm> algo;
        {
            py::gil_scoped_release nogil;
            std::shared_lock<std::shared_mutex> alive(ctx->building);
            ctx->check_open();
            algo = build(ctx->device, s);
        }
        return wrap(std::move(algo), s.push_bytes);
    }

    // Several pipelines, created on up to `threads` threads at once (0: one per core), without
    // the GIL: a driver that compiles shaders in vkCreateComputePipelines compiles them in
    // parallel. Items are (buffers, spirv, push_constant_bytes) as algorithm() takes them.
    std::vector<std::shared_ptr<PyAlgorithm>> algorithms(const std::vector<py::tuple>& items, int threads)
    {
        std::vector<AlgoSpec> specs;
        for (auto& it : items) {
            if (it.size() != 3) fail("algorithms: each item is (buffers, spirv, push_constant_bytes)");
            specs.push_back(spec(it[0].cast<std::vector<std::shared_ptr<PyBuffer>>>(), it[1].cast<py::bytes>(),
                                 it[2].cast<long long>()));
        }
        std::vector<std::shared_ptr<kp::Algorithm>> made(specs.size());
        {
            py::gil_scoped_release nogil;
            std::shared_lock<std::shared_mutex> alive(ctx->building);
            ctx->check_open();
            size_t n = threads > 0 ? size_t(threads) : std::max(1u, std::thread::hardware_concurrency());
            n = std::min(n, specs.size());
            std::atomic<size_t> next{0};
            std::exception_ptr error;
            std::mutex error_mutex;
            auto work = [&] {
                for (size_t i; (i = next++) < specs.size();) {
                    try {
                        made[i] = build(ctx->device, specs[i]);
                    } catch (...) {
                        std::lock_guard<std::mutex> lock(error_mutex);
                        if (!error) error = std::current_exception();
                    }
                }
            };
            std::vector<std::thread> pool;
            for (size_t t = 1; t < n; t++) pool.emplace_back(work);
            work();  // this thread takes part
            for (auto& t : pool) t.join();
            if (error) {
                for (auto& a : made) if (a) a->destroy();
                std::rethrow_exception(error);
            }
        }
        std::vector<std::shared_ptr<PyAlgorithm>> out;
        for (size_t i = 0; i < made.size(); i++) out.push_back(wrap(std::move(made[i]), specs[i].push_bytes));
        return out;
    }
};

// Prewarming for a driver that compiles a pipeline's shader at its first dispatch, on its queue's
// one thread, one shader after another (lavapipe: LLVM, 10-30 ms a shader). A second VkDevice on
// the same physical device has a queue thread of its own: a zero-workgroup dispatch of the same
// pipeline there compiles the same shader at the same time, and the driver's on-disk shader cache
// (Mesa's) hands the result to the first device's dispatch. Jobs run in the order given on one
// worker thread (no Python objects, no GIL); whatever is not done yet when its pipeline's first
// dispatch comes is compiled there as before (at worst twice: a cache miss).
struct Prewarmer {
    std::unique_ptr<PyDevice> helper;
    std::shared_ptr<kp::Tensor> dummy;  // bound to every binding: nothing runs
    std::mutex m;
    std::condition_variable cv;
    std::deque<PyDevice::AlgoSpec> jobs;
    bool stop = false;
    std::thread worker;

    // The helper device is made on the worker thread (~10 ms on lavapipe), off the caller's path.
    Prewarmer(int index, const std::vector<std::string>& disable, std::shared_ptr<Instance> inst)
    {
        worker = std::thread([this, index, disable, inst] {
            try {
                helper = std::make_unique<PyDevice>(index, disable, inst);
                dummy = helper->ctx->tensor(4);
            } catch (...) {
                helper.reset();  // no helper: prewarm does nothing
                return;
            }
            loop();
        });
    }

    void add(std::vector<PyDevice::AlgoSpec>&& specs)
    {
        std::lock_guard<std::mutex> lock(m);
        for (auto& s : specs) {
            s.tensors.assign(s.tensors.size(), nullptr);  // the helper's placeholder, bound in loop()
            jobs.push_back(std::move(s));
        }
        cv.notify_one();
    }

    void loop()
    {
        for (;;) {
            PyDevice::AlgoSpec s;
            {
                std::unique_lock<std::mutex> lock(m);
                cv.wait(lock, [this] { return stop || !jobs.empty(); });
                if (stop) return;
                s = std::move(jobs.front());
                jobs.pop_front();
            }
            try {
                for (auto& t : s.tensors) t = dummy;
                auto algo = PyDevice::build(helper->ctx->device, s);
                auto seq = helper->ctx->sequence();
                auto op = std::make_shared<OpDispatch>();
                op->algo = algo;
                op->groups_x = 0;  // compiles the shader, runs nothing
                op->push = s.push.data();
                op->push_bytes = s.push_bytes;
                seq->record(op);
                helper->ctx->run(*seq);
                seq->destroy();
                algo->destroy();
            } catch (...) {
                // a prewarm is only a hint: the real pipeline reports its own errors
            }
        }
    }

    ~Prewarmer()
    {
        {
            std::lock_guard<std::mutex> lock(m);
            stop = true;
            jobs.clear();
        }
        cv.notify_one();
        if (worker.joinable()) worker.join();
        dummy.reset();
        if (helper) helper->close();
    }
};

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

std::vector<std::string> list_devices()
{
    std::shared_ptr<Instance> inst;
    try {
        inst = shared_instance();
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()) == kNoDevice) return {};
        throw;
    }
    std::vector<std::string> names;
    for (VkPhysicalDevice d : physical_devices(inst->handle)) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(d, &p);
        names.push_back(p.deviceName);
    }
    return names;
}

}  // namespace

PYBIND11_MODULE(_vkrt, m)
{
    m.doc() = "vkdiff's Vulkan runtime: devices with all optional features, "
              "buffers, pipelines, and batches with explicit barriers (on Kompute).";
    static py::exception<OutOfMemory>& oom =
      py::register_exception<OutOfMemory>(m, "OutOfMemoryError", PyExc_MemoryError);
    // Vulkan errors from vulkan.hpp are std::system_error: make them RuntimeError too
    // (out of memory: OutOfMemoryError).
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const vk::OutOfDeviceMemoryError& e) {
            PyErr_SetString(oom.ptr(), (std::string("Vulkan error: ") + e.what()).c_str());
        } catch (const vk::OutOfHostMemoryError& e) {
            PyErr_SetString(oom.ptr(), (std::string("Vulkan error: ") + e.what()).c_str());
        } catch (const vk::SystemError& e) {
            PyErr_SetString(PyExc_RuntimeError, (std::string("Vulkan error: ") + e.what()).c_str());
        }
    });
    m.def("list_devices", &list_devices, "Names of the Vulkan physical devices, in index order.");

    py::class_<PyBuffer, std::shared_ptr<PyBuffer>>(m, "Buffer")
      .def_readonly("nbytes", &PyBuffer::nbytes)
      .def_property_readonly("host", [](py::object self) {
          auto& b = self.cast<PyBuffer&>();
          b.ctx->check_open();
          return py::array_t<uint8_t>({py::ssize_t(b.nbytes)}, {py::ssize_t(1)},
                                      static_cast<uint8_t*>(b.t->rawData()), self);
      }, "1-D uint8 view of the mapped memory: the buffer itself where mapped, else its staging "
         "copy (zero-copy; keeps the Buffer alive).")
      .def_readonly("mapped", &PyBuffer::mapped,
                    "True: one device-local buffer the host maps (unified memory); upload and "
                    "download record nothing. False: a device-local buffer plus a staging copy.")
      .def_readonly("allocated_bytes", &PyBuffer::allocated,
                    "Bytes of device memory this Buffer holds (a staged one: both allocations).")
      .def("__repr__", [](const PyBuffer& b) { return "<vkdiff Buffer " + std::to_string(b.nbytes) + " bytes>"; });

    py::class_<PyAlgorithm, std::shared_ptr<PyAlgorithm>>(m, "Algorithm");

    py::class_<PyBatch, std::shared_ptr<PyBatch>>(m, "Batch")
      .def("upload", [](PyBatch& s, PyBuffer& b) { s.copy(b, true); }, py::arg("buf"),
           "Record the copy of a Buffer's staging memory to the device (nothing when mapped).")
      .def("download", [](PyBatch& s, PyBuffer& b) { s.copy(b, false); }, py::arg("buf"),
           "Record the copy of a Buffer to its staging memory (nothing when mapped).")
      .def("dispatch", &PyBatch::dispatch, py::arg("algo"), py::arg("groups_x"), py::arg("push"))
      .def("fill", &PyBatch::fill, py::arg("buf"), py::arg("offset"), py::arg("size"), py::arg("word"),
           "Record vkCmdFillBuffer: `size` bytes at `offset` (multiples of 4) set to the 32-bit `word`.")
      .def("copy", &PyBatch::copy_region, py::arg("src"), py::arg("dst"), py::arg("src_offset"),
           py::arg("dst_offset"), py::arg("size"),
           "Record vkCmdCopyBuffer of `size` bytes (offsets and size multiples of 4).")
      .def("barrier", &PyBatch::barrier)
      .def("dispatch_indirect", &PyBatch::dispatch_indirect, py::arg("algo"), py::arg("geometry"),
           py::arg("push"), "Record a dispatch of algo whose workgroup count (x, y, z: uint32) "
           "an earlier command wrote into the first 12 bytes of the Buffer geometry.")
      .def("submit", &PyBatch::submit, py::arg("wait") = true)
      .def("wait", &PyBatch::wait)
      .def_property_readonly("inflight", [](const PyBatch& b) { return b.inflight.size(); })
      .def_readonly("pending", &PyBatch::pending);

    py::class_<PyDevice>(m, "Device")
      .def(py::init<int, const std::vector<std::string>&>(), py::arg("index") = 0,
           py::arg("disable") = std::vector<std::string>{})
      .def_readonly("name", &PyDevice::name)
      .def_readonly("api_version", &PyDevice::api_version)
      .def_readonly("driver_version", &PyDevice::driver_version)
      .def_readonly("vendor_id", &PyDevice::vendor_id)
      .def_readonly("subgroup_size", &PyDevice::subgroup_size)
      .def_readonly("features", &PyDevice::features)
      .def_readonly("limits", &PyDevice::limits)
      .def("buffer", &PyDevice::buffer, py::arg("nbytes"))
      .def("algorithm", &PyDevice::algorithm, py::arg("buffers"), py::arg("spirv"),
           py::arg("push_constant_bytes"), py::arg("texels") = std::vector<std::pair<long long, int>>{},
           "A compute pipeline: binding k is buffers[k] (a storage buffer); with `texels`, "
           "[(buffer index, VkFormat)], binding len(buffers) + j is a storage texel buffer "
           "view of that buffer (feature texel_reads).")
      .def("algorithms", &PyDevice::algorithms, py::arg("items"), py::arg("threads") = 0,
           "Several Algorithms from (buffers, spirv, push_constant_bytes) items, their pipelines "
           "created on up to `threads` threads at once (0: one per core), without the GIL.")
      .def("batch", [](PyDevice& d) {
          d.ctx->check_open();
          auto b = std::make_shared<PyBatch>();
          b->ctx = d.ctx;
          return b;
      })
      .def("prewarm", &PyDevice::prewarm, py::arg("items"),
           "Compile the shaders of (buffers, spirv, push_constant_bytes) items on a helper device's "
           "queue thread, in this order, without waiting: for a driver that compiles at the first "
           "dispatch and caches on disk (lavapipe), their first dispatch here then finds them compiled.")
      .def("stop_prewarm", &PyDevice::stop_prewarm,
           "Drop the prewarms not started, wait for the one running, close the helper device.")
      .def("close", &PyDevice::close)
      .def("__repr__", [](const PyDevice& d) { return "<vkdiff Device '" + d.name + "' Vulkan " + d.api_version + ">"; });
}
