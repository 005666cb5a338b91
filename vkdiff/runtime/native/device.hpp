// vkdiff.runtime._vkrt: the Python object Device (PyDevice): device creation with every
// optional feature, buffers, pipelines (built on threads), batches. Its teardown and prewarm()
// are in prewarm.cpp; a unit using PyDevice includes prewarm.hpp (Prewarmer must be complete).
#pragma once
#include "batch.hpp"

namespace vkrt {

struct Prewarmer;

struct PyDevice {
    std::shared_ptr<Ctx> ctx;
    std::string name, api_version;
    uint32_t driver_version = 0, vendor_id = 0, subgroup_size = 0;
    std::map<std::string, bool> features;
    std::map<std::string, uint64_t> limits;
    DeviceFacts facts;
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
        ctx = std::make_shared<Ctx>();
        ctx->closed = true;  // until the VkDevice exists
        ctx->owner = inst ? std::move(inst) : shared_instance();
        ctx->instance = std::make_shared<vk::Instance>(ctx->owner->handle);
        if (const char* env = std::getenv("VKDIFF_DEVICE"); env && *env) {  // an index or a UUID
            try {
                index = device_index(ctx->owner->handle, env);
            } catch (const std::runtime_error& e) {
                fail(std::string("VKDIFF_DEVICE='") + env + "': " + e.what());
            }
        }
        this->index = index;
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
        facts = device_facts(devs[index], index);

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
        ctx->choose(facts, !off("unified_memory"));
        features["unified_memory"] = ctx->mapped;
        // texel reads: every format codegen reads through a storage texel buffer view
        bool texel = !off("texel_reads") && ctx->texel_memory;
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
                                                                   l.maxDescriptorSetStorageImages)},
                  {"max_workgroup_size_y", l.maxComputeWorkGroupSize[1]},
                  {"max_workgroup_size_z", l.maxComputeWorkGroupSize[2]},
                  {"max_bound_descriptor_sets", l.maxBoundDescriptorSets},
                  {"max_memory_allocation_count", l.maxMemoryAllocationCount},
                  {"max_memory_allocation_size", m3.maxMemoryAllocationSize},
                  {"min_subgroup_size", sub.subgroupSize},  // replaced below where 1.3 says more
                  {"max_subgroup_size", sub.subgroupSize}};
        if (api >= VK_API_VERSION_1_3) {  // subgroup size control: the range a shader may get
            vk::PhysicalDeviceSubgroupSizeControlProperties sc;
            vk::PhysicalDeviceProperties2 p2;
            p2.pNext = &sc;
            pd.getProperties2(&p2);
            if (sc.minSubgroupSize) limits["min_subgroup_size"] = sc.minSubgroupSize;
            if (sc.maxSubgroupSize) limits["max_subgroup_size"] = sc.maxSubgroupSize;
        }
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


}  // namespace vkrt
