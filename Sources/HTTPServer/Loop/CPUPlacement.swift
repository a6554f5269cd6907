import CSystem

/// Where event loops run: loop i pinned to one CPU, and a connection served by the loop of
/// the CPU its packets arrive on (chosen at accept time by a reuseport program, followed
/// later when the client's CPU changes). The reply then leaves from the CPU the request came
/// in on: no cross-CPU wake-up per request (an IPI, costly in a VM), a warm cache, and each
/// client thread's connections on one loop. Measured, this is what takes the cache-hit p99
/// below nginx's (docs/benchmarks.md).
public struct CPUPlacement: Sendable, Equatable {
    /// `cpus[i]` is the CPU loop i is pinned to.
    public let cpus: [Int]

    /// A placement only with exactly one loop per allowed CPU (at least two). Otherwise
    /// (`THREADS` below the CPU count, one CPU) nil: the kernel's hash spreads connections.
    public static func plan(loops: Int, allowedCPUs: [Int]) -> CPUPlacement? {
        guard loops >= 2, allowedCPUs.count == loops, allowedCPUs.allSatisfy({ $0 >= 0 }) else { return nil }
        return CPUPlacement(cpus: allowedCPUs.sorted())
    }

    /// The loop pinned to each CPU, indexed by CPU id (-1: a CPU outside the set, e.g. an
    /// interrupt served elsewhere).
    var loopByCPU: [Int] {
        var table = [Int](repeating: -1, count: (cpus.max() ?? 0) + 1)
        for (loop, cpu) in cpus.enumerated() { table[cpu] = loop }
        return table
    }

    /// Makes the reuseport group of `listener` pick the loop of the CPU handling each SYN.
    func steer(listener: Int32) -> Bool {
        let ids = cpus.map(Int32.init)
        return ids.withUnsafeBufferPointer { csys_reuseport_by_cpu(listener, $0.baseAddress, Int32($0.count)) } == 0
    }

    /// The CPUs this process may run on (its affinity mask, which a cpuset narrows).
    static func allowedCPUs() -> [Int] {
        var ids = [Int32](repeating: 0, count: 1024)
        let n = ids.withUnsafeMutableBufferPointer { csys_allowed_cpus($0.baseAddress, Int32($0.count)) }
        return n > 0 ? ids[0..<Int(n)].map(Int.init) : []
    }
}
