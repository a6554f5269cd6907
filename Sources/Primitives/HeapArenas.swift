import CSystem

/// How many malloc arenas the process keeps. glibc gives each thread that allocates an arena of
/// its own, up to eight per core: memory freed on one thread (a burst of refreshes on the
/// cooperative pool) is not reused by allocations on another (the event loops' 10,000
/// streams), and each arena keeps its own free pages resident. Capped at one per core the
/// process may run on, threads share them: at 10,000 streams RSS grew by 1.2 KiB a stream, not
/// 2.5 (events-bench). Small allocations mostly come from each thread's cache (tcache), which
/// takes no arena lock.
public enum HeapArenas {
    public enum Limit: Equatable, Sendable {
        /// Capped here, at this many.
        case capped(Int)
        /// `MALLOC_ARENA_MAX` was set: glibc applied the operator's own.
        case operators(String)
        /// mallopt refused (not glibc's malloc).
        case unchanged
    }

    /// Caps the arenas at one per core the process may run on, unless the environment sets
    /// `MALLOC_ARENA_MAX`. Called first thing, before threads allocate.
    public static func limit(environment: [String: String]) -> Limit {
        if let given = environment["MALLOC_ARENA_MAX"] { return .operators(given) }
        let count = max(1, Int(csys_affinity_cpu_count()))
        return csys_heap_limit_arenas(Int32(clamping: count)) == 1 ? .capped(count) : .unchanged
    }

    /// The arenas in use now (`feedproxy_heap_arenas`); nil when malloc cannot say.
    public static var inUse: Int? {
        let count = csys_heap_arena_count()
        return count >= 0 ? Int(count) : nil
    }
}
