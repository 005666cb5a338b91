// vkdiff.runtime._vkrt: KeepAwake, threads that keep the host's cores awake while a device that
// runs on them (deviceType CPU: lavapipe, SwiftShader) has work.
#pragma once
#include "common.hpp"

#include <system_error>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#endif

namespace vkrt {

// A CPU driver runs each dispatch on its worker threads: lavapipe's queue thread hands every
// dispatch to its compute thread pool and waits for it, two wake-ups per dispatch. Where the
// host thread sleeps too (waiting for the device, which runs behind it), the cores go idle
// between those wake-ups, and each wake-up may land on a halted core: in a virtual machine
// without guest halt polling an interrupt and a VM exit, tens of µs, more than the dispatch.
// KeepAwake runs one thread per core (up to 16) at SCHED_IDLE, yielding in a loop, for
// `window` after each submission and each wait: the cores never halt, and any thread with work
// takes a core from them at once (the scheduler treats a core running only SCHED_IDLE threads
// as idle when it places a woken thread, and such a thread is preempted by any other). Their
// weight is 3 against a normal thread's 1024, but with group scheduling (autogroup) they take
// the CPU time their process's group leaves while its threads sleep: hence the short window.
// Linux only; where SCHED_IDLE cannot be set the thread ends (a normal-priority spinner would
// take CPU time from everything).
struct KeepAwake {
    std::chrono::nanoseconds window{0};  // 0: off
    std::mutex m;
    std::condition_variable cv;
    std::chrono::steady_clock::time_point until{};
    std::vector<std::thread> threads;
    std::atomic<bool> stop{false};
    long owner = 0;  // the process that started the threads (a forked child has none of them)

    // Keep the cores awake until `window` from now (starts the threads at the first call).
    void extend()
    {
#ifdef __linux__
        if (window.count() <= 0 || stop.load(std::memory_order_relaxed)) return;
        auto t = std::chrono::steady_clock::now() + window;
        std::lock_guard<std::mutex> lock(m);
        if (threads.empty()) {
            owner = long(getpid());
            unsigned n = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
            try {
                for (unsigned i = 0; i < n; i++) threads.emplace_back([this] { run(); });
            } catch (const std::system_error&) {  // no threads to spare: go without
                window = std::chrono::nanoseconds(0);
                if (threads.empty()) return;
            }
        }
        if (t > until) {
            bool idle = until < t - window;  // the threads may be asleep
            until = t;
            if (idle) cv.notify_all();
        }
#endif
    }

    void run()
    {
#ifdef __linux__
        sched_param sp{};
        if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) != 0) return;
        std::unique_lock<std::mutex> lock(m);
        while (!stop.load(std::memory_order_relaxed)) {
            auto u = until;
            if (std::chrono::steady_clock::now() >= u) {
                cv.wait(lock);
                continue;
            }
            lock.unlock();
            while (!stop.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < u)
                sched_yield();
            lock.lock();
        }
#endif
    }

    void shutdown()
    {
        {
            std::lock_guard<std::mutex> lock(m);
            stop = true;
            cv.notify_all();
        }
        bool ours = true;
#ifdef __linux__
        ours = owner == long(getpid());
#endif
        for (auto& t : threads)
            if (t.joinable()) ours ? t.join() : t.detach();
        threads.clear();
    }

    ~KeepAwake() { shutdown(); }
};


}  // namespace vkrt
