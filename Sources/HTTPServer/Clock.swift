import Glibc

enum MonotonicClock {
    /// Seconds on the monotonic clock.
    @inline(__always) static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
