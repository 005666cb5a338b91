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
//
// This header: the pieces every unit shares (includes, errors, the shared VkInstance).
// Units: common.cpp (instance, errors), commands.hpp (ops), texel.hpp (texel views),
// ctx.hpp (Ctx, Features), batch.hpp (Buffer, Algorithm, Batch), device.hpp (Device),
// prewarm.hpp/.cpp (Prewarmer, Device teardown), bindings.cpp (the Python module).
#pragma once
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

namespace vkrt {

extern const char* const kNoDevice;
extern const std::vector<std::string> kFeatureNames;

[[noreturn]] void fail(const std::string& msg);

// A device or host allocation failed, or would exceed the heap's budget:
// Python's _vkrt.OutOfMemoryError, a MemoryError. Nothing is left allocated.
struct OutOfMemory : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check(VkResult r, const char* what);
std::string version_string(uint32_t v);

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
extern std::weak_ptr<Instance> g_instance;  // guarded by the GIL

std::shared_ptr<Instance> shared_instance();
std::vector<VkPhysicalDevice> physical_devices(VkInstance inst);
std::vector<std::string> list_devices();

// What vkdiff reads about a physical device before opening it: the kind of device and driver
// (VkPhysicalDeviceProperties.deviceType, VkPhysicalDeviceDriverProperties.driverID: code is
// chosen by these, never by the name), its identity (deviceUUID, as 32 lowercase hex digits)
// and its memory types and heaps.
struct DeviceFacts {
    int index = 0;
    std::string name, uuid, driver_name, driver_info, api_version;
    uint32_t device_type = 0, driver_id = 0, vendor_id = 0, device_id = 0, driver_version = 0;
    uint32_t max_allocations = 0;
    std::vector<std::pair<uint32_t, uint32_t>> memory_types;  // (propertyFlags, heapIndex)
    std::vector<std::pair<uint64_t, uint32_t>> memory_heaps;  // (size, flags)
};
DeviceFacts device_facts(VkPhysicalDevice pd, int index);
std::vector<DeviceFacts> all_device_facts();
// The index of the device `spec` names: a decimal index, or a deviceUUID (32 hex digits, any
// case, dashes allowed). Anything else, or no such device: an error listing the devices.
int device_index(VkInstance inst, const std::string& spec);

using Stage = vk::PipelineStageFlagBits;
using Access = vk::AccessFlagBits;

}  // namespace vkrt
