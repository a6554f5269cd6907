import Glibc
import Primitives

/// The standard process metrics every Prometheus client library exports, under their
/// standard names, read from `/proc/self` at scrape time (a few small reads, no state), and
/// the container's memory limit from the cgroup, so alerts can compare the two. Every
/// number read is checked: a field that does not parse is left out, never a trap.
package struct ProcessMetrics {
    package var cpuSeconds: Double?
    package var residentBytes: Int?
    package var virtualBytes: Int?
    package var startTimeSeconds: Double?
    package var openFDs: Int?
    package var maxFDs: Int?
    /// The cgroup's memory limit; nil when unlimited or unknown.
    package var memoryLimitBytes: Int?

    package static func read() -> ProcessMetrics {
        var m = ProcessMetrics()
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = sysconf(Int32(_SC_PAGESIZE))
        if let stat = readFile("/proc/self/stat").map(statFields), ticks > 0 {
            // After "pid (comm)": field 3 is index 0, so utime (14) is 11, stime 12,
            // starttime (22) 19, vsize (23) 20, rss (24) 21.
            if stat.count > 21 {
                if let u = UInt64(stat[11]), let s = UInt64(stat[12]) { m.cpuSeconds = (Double(u) + Double(s)) / ticks }
                m.virtualBytes = Int(stat[20])
                if let pages = Int(stat[21]), page > 0 {
                    let (bytes, overflow) = pages.multipliedReportingOverflow(by: page)
                    if !overflow, bytes >= 0 { m.residentBytes = bytes }
                }
                if let start = UInt64(stat[19]), let boot = bootTime() { m.startTimeSeconds = boot + Double(start) / ticks }
            }
        }
        m.openFDs = countEntries("/proc/self/fd")
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(Int32.max) {
            m.maxFDs = Int(limit.rlim_cur)
        }
        m.memoryLimitBytes = memoryLimit()
        return m
    }

    /// `/proc/self/stat` after the command name, which may itself hold spaces and parentheses.
    package static func statFields(_ text: String) -> [Substring] {
        guard let close = text.lastIndex(of: ")") else { return [] }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// Seconds since the epoch at boot (`btime` in /proc/stat).
    package static func bootTime() -> Double? {
        guard let text = readFile("/proc/stat") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingASCIIWhitespace())
        }
        return nil
    }

    /// The tightest memory limit over this process's cgroups: cgroup v2's `memory.max` from
    /// its cgroup up to the root; cgroup v1's `hierarchical_memory_limit` (which already
    /// folds in the ancestors) and `memory.limit_in_bytes`. "max", and v1's "unlimited"
    /// (a page-rounded 2^63), read as no limit.
    package static func memoryLimit() -> Int? {
        var best: Int?
        func consider(_ text: Substring?) {
            guard let text, let v = Int(text.trimmingASCIIWhitespace()), v > 0, v < 1 << 62 else { return }
            best = min(best ?? v, v)
        }
        for line in (readFile("/proc/self/cgroup") ?? "").split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            var path = parts[2] == "/" ? "" : String(parts[2])
            if parts[0] == "0" && parts[1].isEmpty {
                while true {
                    consider(readFile("/sys/fs/cgroup\(path)/memory.max")?[...])
                    guard let slash = path.lastIndex(of: "/") else { break }
                    path = String(path[..<slash])
                }
            } else if parts[1].split(separator: ",").contains("memory") {
                let dir = "/sys/fs/cgroup/memory\(path)"
                let stat = readFile(dir + "/memory.stat") ?? ""
                consider(stat.split(separator: "\n").first { $0.hasPrefix("hierarchical_memory_limit ") }?.split(separator: " ").last)
                consider(readFile(dir + "/memory.limit_in_bytes")?[...])
            }
        }
        return best
    }

    /// A small text file, whole (procfs and cgroupfs report size 0, so read until EOF).
    package static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while out.count < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 4096) }
            if n <= 0 { break }
            out.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Entries of a directory but `.` and `..` (open descriptors in /proc/self/fd, the
    /// descriptor used for reading included, as other clients count it).
    package static func countEntries(_ path: String) -> Int? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var n = 0
        while let entry = readdir(dir) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in name[0] == 0x2E && (name[1] == 0 || (name[1] == 0x2E && name[2] == 0)) }
            if !isDot { n += 1 }
        }
        return n
    }

    /// The families, in the Prometheus text format.
    package func render(into out: inout String) {
        func metric(_ name: String, _ type: String, _ help: String, _ value: String?) {
            guard let value else { return }
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        metric("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", cpuSeconds.map { "\($0)" })
        metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", residentBytes.map { "\($0)" })
        metric("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", virtualBytes.map { "\($0)" })
        metric("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", startTimeSeconds.map { "\($0)" })
        metric("process_open_fds", "gauge", "Number of open file descriptors.", openFDs.map { "\($0)" })
        metric("process_max_fds", "gauge", "Maximum number of open file descriptors.", maxFDs.map { "\($0)" })
        metric(
            "feedproxy_memory_limit_bytes", "gauge", "The container's (cgroup's) memory limit; absent when unlimited.",
            memoryLimitBytes.map { "\($0)" })
    }
}
