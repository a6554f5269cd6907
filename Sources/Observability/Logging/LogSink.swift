import Glibc
import Primitives
import Synchronization

/// Where log lines go, built like nginx's `access_log … buffer= flush=`: each event loop
/// renders its lines into its own byte buffer (a lane: no lock shared between loops, no
/// wake-up per line); a writer thread takes a lane's buffer when it reaches `batchBytes`
/// or every `flushInterval`, and writes it with one `write`. A stalled stdout only
/// stops the writer: when a lane holds `laneCapacity` unwritten bytes, its new lines are
/// dropped and counted (`feedproxy_log_lines_dropped_total`), and no loop ever blocks.
public final class LogSink: Sendable {
    public static let batchBytes = 64 * 1024
    public static let flushInterval = 0.1
    /// Unwritten bytes one lane may hold (its buffer plus batches the writer has not finished).
    public static let laneCapacity = 2 << 20

    @usableFromInline package struct Lane: ~Copyable {
        @usableFromInline package var buffer = ByteBuffer()
        /// Full buffers waiting for the writer, oldest first (kept in the lane so order holds).
        @usableFromInline package var full: [Batch] = []
        /// A written batch's allocation, to fill next: a lane swaps buffers, it does not copy
        /// or allocate per batch.
        @usableFromInline package var spare: Batch?
        /// Bytes in `full` plus bytes taken by the writer and not yet written.
        @usableFromInline package var handedOff = 0
        @usableFromInline package var clock = TimestampCache()
    }

    @usableFromInline let lanes: [Locked<Lane>]
    @usableFromInline let wake = WakeSignal()
    @usableFromInline let dropped = Atomic<Int>(0)
    private let fd: Int32

    /// `lanes`: one per event loop, plus one shared by every other thread (the last).
    public init(fd: Int32 = 1, lanes: Int = 1) {
        self.fd = fd
        self.lanes = (0..<max(1, lanes)).map { _ in Locked(Lane()) }
        _ = NativeThread.start(name: "log-writer") { [self] in
            while true { drain(waitingUpTo: Self.flushInterval) }
        }
    }

    public var droppedLines: Int { dropped.load(ordering: .relaxed) }

    /// The lane for threads that are not event loops.
    @usableFromInline package var sharedLane: Int { lanes.count - 1 }

    /// Renders one line into `lane` (any index; out of range means the shared lane).
    @inlinable package func write(lane index: Int, level: LogLevel, _ render: (inout ByteBuffer) -> Void) {
        write(lane: index, level: level, ()) { _, out in render(&out) }
    }

    /// The same, with what the line is rendered from passed in, not captured: a closure
    /// capturing a request's record copies the whole record first.
    @inlinable package func write<Context>(lane index: Int, level: LogLevel, _ context: Context, _ render: (Context, inout ByteBuffer) -> Void) {
        let i = index >= 0 && index < lanes.count ? index : sharedLane
        let outcome = lanes[i].withLock { lane -> Bool? in
            guard lane.buffer.count + lane.handedOff < Self.laneCapacity else { return nil }
            if lane.buffer.capacity == 0 { lane.buffer.reserveCapacity(Self.batchBytes + 4096) }
            LogLine.appendHead(level: level, clock: &lane.clock, into: &lane.buffer)
            render(context, &lane.buffer)
            lane.buffer.append(literal: "}\n")
            guard lane.buffer.count >= Self.batchBytes else { return false }
            lane.handOff()
            return true
        }
        switch outcome {
        case nil: dropped.add(1, ordering: .relaxed)
        case true?: wake.signal()  // once per batch, not per line
        case false?: break
        }
    }

    /// Writes everything accepted so far (before exit), waiting at most `timeout` seconds.
    public func flush(timeout: Double = 2) {
        let end = NativeThread.monotonicSeconds() + timeout
        while pendingBytes > 0 {
            wake.signal()
            if NativeThread.monotonicSeconds() >= end { return }
            usleep(1000)
        }
    }

    @usableFromInline package var pendingBytes: Int { lanes.reduce(0) { sum, lane in sum + lane.withLock { $0.buffer.count + $0.handedOff } } }

    /// One writer pass: per lane, its full batches and then what its buffer has gathered,
    /// taken under the lane's lock in one go so the lane's lines keep their order.
    private func drain(waitingUpTo interval: Double) {
        wake.wait(timeout: interval)
        for lane in lanes {
            let work = lane.withLock { l -> [Batch] in
                if !l.buffer.isEmpty { l.handOff() }
                defer { l.full.removeAll() }
                return l.full
            }
            for batch in work {
                let written = batch.bytes.withUnsafeBytes(writeAll)
                batch.bytes.removeAll(keepingCapacity: true)
                lane.withLock {
                    $0.handedOff -= written
                    $0.spare = batch
                }
            }
        }
    }

    /// Writes `buf`; returns its length (what leaves the lane's count, written or lost).
    private func writeAll(_ buf: UnsafeRawBufferPointer) -> Int {
        guard let base = buf.baseAddress else { return 0 }
        var offset = 0
        while offset < buf.count {
            let n = Glibc.write(fd, base + offset, buf.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }  // stdout gone: the bytes are lost, the service goes on
            offset += n
        }
        return buf.count
    }
}

/// A lane's full buffer on its way to the writer: the lane gives it up under its lock and
/// takes a spare in its place; the writer alone touches it until it comes back as the spare.
@usableFromInline package final class Batch: @unchecked Sendable {
    @usableFromInline package var bytes: ByteBuffer

    package init(_ bytes: consuming ByteBuffer) { self.bytes = bytes }
}

extension LogSink.Lane {
    /// Queues the buffer for the writer and continues in the spare's allocation.
    @usableFromInline package mutating func handOff() {
        handedOff += buffer.count
        let filled = buffer.take()
        if let spare = spare.take() {
            buffer = spare.bytes.take()
            spare.bytes = filled
            full.append(spare)
        } else {
            full.append(Batch(filled))
        }
    }
}
