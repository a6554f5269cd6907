import CSystem
import Glibc

/// A detached pthread running one closure: what the event loops and the curl driver need
/// from a thread, without Foundation's `Thread`.
public enum NativeThread {
    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a new thread named `name` (at most 15 bytes are kept);
    /// false if the system refused to create one.
    public static func start(name: String, stackSize: Int = 0, _ body: @escaping @Sendable () -> Void) -> Bool {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if stackSize > 0 { pthread_attr_setstacksize(&attributes, stackSize) }
        var thread = pthread_t()
        let created = pthread_create(
            &thread, &attributes,
            { argument in
                guard let argument else { return nil }
                let start = Unmanaged<Start>.fromOpaque(argument).takeRetainedValue()
                csys_set_thread_name(start.name)
                start.body()
                return nil
            }, start)
        if created != 0 { Unmanaged<Start>.fromOpaque(start).release() }
        return created == 0
    }

    /// Pins the calling thread to one CPU; false if the system refused (a CPU outside the cpuset).
    @discardableResult
    public static func pinCurrent(toCPU cpu: Int) -> Bool { csys_pin_thread(Int32(cpu)) == 0 }

    /// Batch scheduling for the calling thread (SCHED_BATCH): woken while another thread runs
    /// on its CPU, it waits for that one to block or finish its slice instead of preempting it,
    /// and then handles everything that arrived meanwhile. False if the system refused.
    @discardableResult
    public static func batchScheduling() -> Bool { csys_sched_batch(1) == 0 }

    /// Processors the calling thread may run on (1 on a pinned thread).
    public static var currentThreadCPUCount: Int { Int(csys_thread_cpu_count()) }

    /// Lets the calling thread run on all of `cpus` again, once per thread, with the default
    /// scheduling policy: threads inherit their creator's affinity and policy, so a pool
    /// thread a pinned (batch-scheduled) loop started would be pinned and batched too.
    public static func allowOnce(cpus: [Int32]) {
        _ = cpus.withUnsafeBufferPointer { csys_thread_allow_cpus_once($0.baseAddress, Int32($0.count)) }
    }

    /// Seconds on the monotonic clock (what `ProcessInfo.systemUptime` gave, without Foundation).
    public static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Sleeps the calling thread.
    public static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Processors this process may run on (the main thread's affinity mask, which a cpuset
    /// narrows; what `activeProcessorCount` gave), whichever thread asks.
    public static var processorCount: Int {
        let count = Int(csys_affinity_cpu_count())
        return count > 0 ? count : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
