// vkdiff.runtime._vkrt: the pybind11 module (PYBIND11_MODULE) exposing Device, Buffer,
// Algorithm, Batch and list_devices; the C++ objects are in the headers beside this file.
#include "prewarm.hpp"

using namespace vkrt;

static py::dict facts_dict(const DeviceFacts& f)
{
    py::dict d;
    d["index"] = f.index;
    d["name"] = f.name;
    d["uuid"] = f.uuid;
    d["device_type"] = f.device_type;
    d["driver_id"] = f.driver_id;
    d["driver_name"] = f.driver_name;
    d["driver_info"] = f.driver_info;
    d["vendor_id"] = f.vendor_id;
    d["device_id"] = f.device_id;
    d["api_version"] = f.api_version;
    d["driver_version"] = f.driver_version;
    d["max_memory_allocation_count"] = f.max_allocations;
    d["memory_types"] = f.memory_types;
    d["memory_heaps"] = f.memory_heaps;
    return d;
}

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
    m.def("device_facts", [] {
        py::list out;
        for (auto& f : all_device_facts()) out.append(facts_dict(f));
        return out;
    }, "Each Vulkan physical device's facts, in index order (dicts: index, name, uuid, device_type "
       "and driver_id as Vulkan's enum values, driver_name, driver_info, vendor_id, device_id, "
       "api_version, driver_version, max_memory_allocation_count, memory_types [(flags, heap)], "
       "memory_heaps [(size, flags)]); opens no device.");
    m.def("choose_memory", [](uint32_t device_type, const std::vector<uint32_t>& flags, uint32_t field_allowed,
                              uint32_t staging_allowed, bool unified_allowed) {
        MemoryChoice c = choose_memory(device_type, flags, field_allowed, staging_allowed, unified_allowed);
        auto idx = [](uint32_t i) { return i == UINT32_MAX ? py::object(py::none()) : py::object(py::int_(i)); };
        py::dict d;
        d["field"] = idx(c.field);
        d["staging"] = c.mapped ? py::object(py::none()) : idx(c.staging);
        d["mapped"] = c.mapped;
        return d;
    }, py::arg("device_type"), py::arg("memory_flags"), py::arg("field_allowed") = 0xFFFFFFFFu,
       py::arg("staging_allowed") = 0xFFFFFFFFu, py::arg("unified_allowed") = true,
       "The memory types a device's Buffers use (the pure function the Device runs): dict field, "
       "staging (None when mapped or none fits), mapped.");

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
      .def_property_readonly("facts", [](const PyDevice& d) { return facts_dict(d.facts); },
                             "This device's facts (as _vkrt.device_facts() gives them).")
      .def_property_readonly("memory", [](const PyDevice& d) {
          py::dict c;
          c["field"] = d.ctx->memory.field;
          c["staging"] = d.ctx->mapped ? py::object(py::none()) : py::object(py::int_(d.ctx->memory.staging));
          c["mapped"] = d.ctx->mapped;
          c["block_size"] = d.ctx->alloc->block_size;
          c["sub_allocated_up_to"] = d.ctx->alloc->small;
          return c;
      }, "The memory types chosen (indices into facts['memory_types']) and the sub-allocation sizes.")
      .def_property_readonly("memory_allocations", [](PyDevice& d) {
          std::lock_guard<std::mutex> lock(d.ctx->alloc->m);
          return d.ctx->alloc->live;
      }, "vkAllocateMemory objects the Buffers hold now (blocks and dedicated allocations).")
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

