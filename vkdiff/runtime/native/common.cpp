// vkdiff.runtime._vkrt: the process's shared VkInstance, device enumeration and the
// error helpers (see common.hpp).
#include "common.hpp"

namespace vkrt {

const char* const kNoDevice =
  "no Vulkan device found: install a Vulkan driver, e.g. `apt-get install "
  "mesa-vulkan-drivers` for the CPU driver lavapipe";
const std::vector<std::string> kFeatureNames = {
    "float32_atomic_add", "float32_atomic_minmax", "float64", "int64",
    "float64_atomic_add", "int64_atomics", "subgroup_basic", "subgroup_vote",
    "subgroup_arithmetic", "subgroup_ballot", "subgroup_shuffle",
    "float_controls_preserve32", "float_controls_preserve64", "unified_memory", "texel_reads"};

[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error(msg); }

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


void keep_forever(std::shared_ptr<void> p)
{
    static auto* kept = new std::vector<std::shared_ptr<void>>();  // (leaked on purpose)
    kept->push_back(std::move(p));
}

}  // namespace vkrt
