// vkdiff.runtime._vkrt: the process's shared VkInstance, device enumeration and the
// error helpers (see common.hpp).
#include "common.hpp"

#include <cctype>

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

DeviceFacts device_facts(VkPhysicalDevice pd, int index)
{
    DeviceFacts f;
    f.index = index;
    VkPhysicalDeviceProperties base;
    vkGetPhysicalDeviceProperties(pd, &base);
    bool driver_props = base.apiVersion >= VK_API_VERSION_1_2;
    if (!driver_props) {  // a 1.1 device: VK_KHR_driver_properties
        uint32_t n = 0;
        vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
        std::vector<VkExtensionProperties> exts(n);
        vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
        for (auto& e : exts)
            driver_props = driver_props || std::strcmp(e.extensionName, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME) == 0;
    }
    VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    id.pNext = driver_props ? &drv : nullptr;
    VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    m3.pNext = &id;
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &m3;
    vkGetPhysicalDeviceProperties2(pd, &p2);
    const auto& p = p2.properties;
    f.name = p.deviceName;
    f.api_version = version_string(p.apiVersion);
    f.device_type = uint32_t(p.deviceType);
    f.vendor_id = p.vendorID;
    f.device_id = p.deviceID;
    f.driver_version = p.driverVersion;
    f.max_allocations = p.limits.maxMemoryAllocationCount;
    static const char* hex = "0123456789abcdef";
    for (uint8_t b : id.deviceUUID) {
        f.uuid += hex[b >> 4];
        f.uuid += hex[b & 15];
    }
    if (driver_props) {
        f.driver_id = uint32_t(drv.driverID);
        f.driver_name = drv.driverName;
        f.driver_info = drv.driverInfo;
    }
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        f.memory_types.emplace_back(mp.memoryTypes[i].propertyFlags, mp.memoryTypes[i].heapIndex);
    for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
        f.memory_heaps.emplace_back(mp.memoryHeaps[i].size, mp.memoryHeaps[i].flags);
    return f;
}

std::vector<DeviceFacts> all_device_facts()
{
    std::shared_ptr<Instance> inst;
    try {
        inst = shared_instance();
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()) == kNoDevice) return {};
        throw;
    }
    std::vector<DeviceFacts> out;
    int i = 0;
    for (VkPhysicalDevice d : physical_devices(inst->handle)) out.push_back(device_facts(d, i++));
    return out;
}

int device_index(VkInstance inst, const std::string& spec)
{
    auto devs = physical_devices(inst);
    std::string known;
    for (size_t i = 0; i < devs.size(); i++) {
        DeviceFacts f = device_facts(devs[i], int(i));
        known += "\n  " + std::to_string(i) + ": " + f.name + " (uuid " + f.uuid + ")";
    }
    std::string want;
    for (char c : spec)
        if (c != '-') want += char(std::tolower(static_cast<unsigned char>(c)));
    // a UUID first: one may be all decimal digits (SwiftShader's is)
    bool is_uuid = want.size() == 32 && want.find_first_not_of("0123456789abcdef") == std::string::npos;
    char* end = nullptr;
    long k = std::strtol(spec.c_str(), &end, 10);
    if (!is_uuid && !spec.empty() && *end == 0) {
        if (k < 0 || size_t(k) >= devs.size())
            fail("Vulkan device index " + spec + " out of range: " + std::to_string(devs.size()) +
                 " device(s) found:" + known);
        return int(k);
    }
    if (is_uuid)
        for (size_t i = 0; i < devs.size(); i++)
            if (device_facts(devs[i], int(i)).uuid == want) return int(i);
    fail(std::string(is_uuid ? "no Vulkan device has the UUID '" : "'") + spec +
         (is_uuid ? "'" : "' is neither a device index nor a device UUID (32 hex digits)") +
         "; the devices are:" + (known.empty() ? std::string(" none") : known));
}

}  // namespace vkrt
