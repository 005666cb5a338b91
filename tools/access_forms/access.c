// Microbenchmark host (tools/access_forms/run.py builds and runs it; not part of the package):
// one compute shader over N elements, bindings 0 and 1 of the descriptor types given as two
// letters (s storage buffer, t storage texel buffer, u uniform texel buffer), the buffers'
// device addresses in the push constants. Dispatches REPS times in one command buffer (a
// barrier after each), best of 5 submits; prints microseconds per dispatch.
//   access SPV TYPES N GROUP_SIZE REPS FORMAT(0 r32f, 1 rg32f, 2 r32ui, 3 rgba32f)
#include <vulkan/vulkan.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(x) do { VkResult r_ = (x); if (r_) { fprintf(stderr, "%s: %d\n", #x, r_); exit(1); } } while (0)

static VkDevice dev;
static VkPhysicalDevice pd;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static uint32_t host_memory_type(uint32_t bits)
{
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits >> i & 1) && (mp.memoryTypes[i].propertyFlags & 6) == 6) return i;
    fprintf(stderr, "no host-visible coherent memory\n");
    exit(1);
}

typedef struct { VkBuffer b; VkDeviceMemory m; void* p; VkBufferView v; uint64_t addr; } Buf;

static Buf make_buffer(size_t n, VkFormat fmt)
{
    Buf B;
    VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = n;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT |
               VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    CK(vkCreateBuffer(dev, &bi, 0, &B.b));
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(dev, B.b, &mr);
    VkMemoryAllocateFlagsInfo fi = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    fi.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &fi};
    ai.allocationSize = mr.size;
    ai.memoryTypeIndex = host_memory_type(mr.memoryTypeBits);
    CK(vkAllocateMemory(dev, &ai, 0, &B.m));
    CK(vkBindBufferMemory(dev, B.b, B.m, 0));
    CK(vkMapMemory(dev, B.m, 0, n, 0, &B.p));
    VkBufferViewCreateInfo vi = {VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
    vi.buffer = B.b;
    vi.format = fmt;
    vi.range = VK_WHOLE_SIZE;
    CK(vkCreateBufferView(dev, &vi, 0, &B.v));
    VkBufferDeviceAddressInfo da = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    da.buffer = B.b;
    B.addr = vkGetBufferDeviceAddress(dev, &da);
    return B;
}

int main(int argc, char** argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: access SPV TYPES N GROUP_SIZE REPS FORMAT\n");
        return 2;
    }
    const char *spv = argv[1], *types = argv[2];
    uint32_t N = atoi(argv[3]), WG = atoi(argv[4]), R = atoi(argv[5]);
    int f = atoi(argv[6]);
    VkFormat formats[] = {VK_FORMAT_R32_SFLOAT, VK_FORMAT_R32G32_SFLOAT, VK_FORMAT_R32_UINT,
                          VK_FORMAT_R32G32B32A32_SFLOAT};
    int esz[] = {4, 8, 4, 16};

    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    VkInstance inst;
    CK(vkCreateInstance(&ici, 0, &inst));
    uint32_t n = 1;
    vkEnumeratePhysicalDevices(inst, &n, &pd);
    if (!n) { fprintf(stderr, "no Vulkan device\n"); return 1; }
    float prio = 1;
    VkDeviceQueueCreateInfo qi = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueCount = 1;
    qi.pQueuePriorities = &prio;
    VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.bufferDeviceAddress = 1;
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
    f2.features.shaderInt64 = 1;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qi;
    CK(vkCreateDevice(pd, &dci, 0, &dev));
    VkQueue q;
    vkGetDeviceQueue(dev, 0, 0, &q);

    Buf A = make_buffer((size_t)N * esz[f], formats[f]), B = make_buffer((size_t)N * esz[f], formats[f]);
    for (uint32_t i = 0; i < N * esz[f] / 4; i++) {
        ((float*)A.p)[i] = f == 2 ? 0 : 1.0f + (i % 7);
        ((float*)B.p)[i] = 0;
    }
    VkDescriptorType dt[2];
    for (int k = 0; k < 2; k++)
        dt[k] = types[k] == 't' ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER
              : types[k] == 'u' ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    VkDescriptorSetLayoutBinding lb[2] = {{0, dt[0], 1, VK_SHADER_STAGE_COMPUTE_BIT},
                                          {1, dt[1], 1, VK_SHADER_STAGE_COMPUTE_BIT}};
    VkDescriptorSetLayoutCreateInfo li = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.bindingCount = 2;
    li.pBindings = lb;
    VkDescriptorSetLayout dsl;
    CK(vkCreateDescriptorSetLayout(dev, &li, 0, &dsl));
    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 24};
    VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &dsl;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &pcr;
    VkPipelineLayout pl;
    CK(vkCreatePipelineLayout(dev, &pli, 0, &pl));
    FILE* fp = fopen(spv, "rb");
    if (!fp) { perror(spv); return 1; }
    fseek(fp, 0, SEEK_END);
    long sz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint32_t* code = malloc(sz);
    if (fread(code, 1, sz, fp) != (size_t)sz) return 1;
    fclose(fp);
    VkShaderModuleCreateInfo smi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smi.codeSize = sz;
    smi.pCode = code;
    VkShaderModule sm;
    CK(vkCreateShaderModule(dev, &smi, 0, &sm));
    VkComputePipelineCreateInfo cpi = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = sm;
    cpi.stage.pName = "main";
    cpi.layout = pl;
    VkPipeline pip;
    CK(vkCreateComputePipelines(dev, 0, 1, &cpi, 0, &pip));
    VkDescriptorPoolSize ps[3] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2},
                                  {VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, 2},
                                  {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, 2}};
    VkDescriptorPoolCreateInfo dpi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = 1;
    dpi.poolSizeCount = 3;
    dpi.pPoolSizes = ps;
    VkDescriptorPool dp;
    CK(vkCreateDescriptorPool(dev, &dpi, 0, &dp));
    VkDescriptorSetAllocateInfo dsi = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dsi.descriptorPool = dp;
    dsi.descriptorSetCount = 1;
    dsi.pSetLayouts = &dsl;
    VkDescriptorSet ds;
    CK(vkAllocateDescriptorSets(dev, &dsi, &ds));
    Buf* bufs[2] = {&A, &B};
    for (int k = 0; k < 2; k++) {
        VkDescriptorBufferInfo dbi = {bufs[k]->b, 0, VK_WHOLE_SIZE};
        VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w.dstSet = ds;
        w.dstBinding = k;
        w.descriptorCount = 1;
        w.descriptorType = dt[k];
        if (types[k] == 't' || types[k] == 'u') w.pTexelBufferView = &bufs[k]->v;
        else w.pBufferInfo = &dbi;
        vkUpdateDescriptorSets(dev, 1, &w, 0, 0);
    }
    VkCommandPoolCreateInfo cpo = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    VkCommandPool pool;
    CK(vkCreateCommandPool(dev, &cpo, 0, &pool));
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool;
    cai.commandBufferCount = 1;
    VkCommandBuffer cb;
    CK(vkAllocateCommandBuffers(dev, &cai, &cb));
    VkCommandBufferBeginInfo cbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CK(vkBeginCommandBuffer(cb, &cbi));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pip);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &ds, 0, 0);
    struct { uint64_t a, b; uint32_t n, pad; } pc = {A.addr, B.addr, N, 0};
    vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 24, &pc);
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    for (uint32_t r = 0; r < R; r++) {
        vkCmdDispatch(cb, N / WG, 1, 1);
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                             0, 1, &mb, 0, 0, 0, 0);
    }
    CK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CK(vkCreateFence(dev, &fci, 0, &fence));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    double best = 1e9;
    for (int it = 0; it < 5; it++) {
        double t = now();
        CK(vkQueueSubmit(q, 1, &si, fence));
        CK(vkWaitForFences(dev, 1, &fence, 1, ~0ull));
        t = now() - t;
        vkResetFences(dev, 1, &fence);
        if (t < best) best = t;
    }
    printf("%.3f\n", best / R * 1e6);
    return 0;
}
