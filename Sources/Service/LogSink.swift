import Dispatch
import Foundation
import Glibc
import Locking
import Synchronization

/// Where log lines go: a bounded queue drained by its own thread, so a slow stdout
/// (a stalled log collector) never blocks an event loop. When the queue is full, new
/// lines are dropped and counted (`feedproxy_log_lines_dropped_total`).
public final class LogSink: Sendable {
    public static let capacity = 10_000

    private let queue = Locked<[String]>([])
    private let wake = DispatchSemaphore(value: 0)
    private let dropped = Atomic<Int>(0)
    /// Lines accepted but not yet written.
    private let outstanding = Atomic<Int>(0)
    private let fd: Int32

    public init(fd: Int32 = 1) {
        self.fd = fd
        let thread = Thread { [self] in drain() }
        thread.name = "log-writer"
        thread.start()
    }

    public var droppedLines: Int { dropped.load(ordering: .relaxed) }

    func enqueue(_ line: String) {
        let accepted = queue.withLock { q -> Bool in
            guard q.count < Self.capacity else { return false }
            q.append(line)
            return true
        }
        if accepted {
            outstanding.add(1, ordering: .relaxed)
            wake.signal()
        } else {
            dropped.add(1, ordering: .relaxed)
        }
    }

    /// Waits (briefly) until everything queued so far is written: before exit.
    public func flush(timeout: Double = 2) {
        let deadline = DispatchTime.now() + timeout
        while outstanding.load(ordering: .relaxed) > 0 && DispatchTime.now() < deadline { usleep(1000) }
    }

    private func drain() {
        while true {
            wake.wait()
            let lines = queue.withLock { q -> [String] in
                defer { q.removeAll(keepingCapacity: true) }
                return q
            }
            if !lines.isEmpty {
                write(lines.joined())
                outstanding.subtract(lines.count, ordering: .relaxed)
            }
        }
    }

    private func write(_ text: String) {
        var text = text
        text.withUTF8 { buf in
            guard let base = buf.baseAddress else { return }
            var offset = 0
            while offset < buf.count {
                let n = Glibc.write(fd, base + offset, buf.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }
}
