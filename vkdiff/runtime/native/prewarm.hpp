// vkdiff.runtime._vkrt: Prewarmer, shaders compiled ahead on a helper VkDevice.
#pragma once
#include "device.hpp"

namespace vkrt {

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

}  // namespace vkrt
