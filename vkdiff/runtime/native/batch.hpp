// vkdiff.runtime._vkrt: the Python objects Buffer (PyBuffer: kp::Tensor), Algorithm
// (PyAlgorithm) and Batch (PyBatch: a kp::Sequence of dispatches, barriers, fills, copies).
#pragma once
#include "ctx.hpp"

namespace vkrt {

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
        const Allocation& a = static_cast<PooledTensor&>(*t).primary;
        if (req.size > a.size || a.offset % req.alignment || !(req.memoryTypeBits & (1u << ctx->memory.field)))
            fail("texel view: the alias buffer cannot bind the Buffer's memory");
        check(vkBindBufferMemory(dev, tv->buf, a.mem, a.offset), "vkBindBufferMemory (texel view)");
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


}  // namespace vkrt
