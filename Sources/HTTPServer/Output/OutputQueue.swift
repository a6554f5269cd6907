import CSystem
import Glibc
import Primitives

/// A connection's unsent output: response heads (and small bodies) copied into one
/// reusable buffer, large bodies referenced where they already are (a cached body is
/// never copied), all leaving in one `sendmsg` with an iovec per piece.
struct OutputQueue: ~Copyable {
    private enum Chunk {
        case local(Range<Int>)
        case shared([UInt8])
    }

    enum SendResult {
        case done, wouldBlock, failed
    }

    /// Bodies at least this large are referenced, not copied.
    static let shareThreshold = 2048
    private static let maxIOVecs = 16

    private var buffer = ByteBuffer()
    private var chunks: [Chunk] = []
    private var localStart = 0
    private var head = 0
    private var sentInHead = 0
    private(set) var pendingBytes = 0
    /// Keeps its buffer between responses (a keep-alive connection's next answer reuses it);
    /// a long-lived stream's queue lets it go once empty: ten thousand idle streams would
    /// otherwise each keep the largest event they were sent.
    var keepsStorage = true

    /// Empty until the first response: an idle connection that never asked owns no buffer.
    init() {}

    var isEmpty: Bool { pendingBytes == 0 }

    mutating func append(_ byte: UInt8) {
        buffer.append(byte)
        pendingBytes += 1
    }

    mutating func append(literal: StaticString) {
        buffer.append(literal: literal)
        pendingBytes += literal.utf8CodeUnitCount
    }

    mutating func append(decimal value: Int) {
        let before = buffer.count
        buffer.append(decimal: value)
        pendingBytes += buffer.count - before
    }

    /// `value` in lowercase hex, `digits` of them.
    mutating func append(hex value: UInt64, digits: Int) {
        let before = buffer.count
        buffer.append(hex: value, digits: digits)
        pendingBytes += buffer.count - before
    }

    mutating func append(contentsOf bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        pendingBytes += bytes.count
    }

    mutating func append(utf8 string: String) {
        buffer.append(utf8: string)
        pendingBytes += string.utf8.count
    }

    /// A body: copied when small, referenced when large.
    mutating func appendBody(_ body: [UInt8]) {
        guard body.count >= Self.shareThreshold else { return append(contentsOf: body) }
        closeLocalRun()
        chunks.append(.shared(body))
        pendingBytes += body.count
    }

    private mutating func closeLocalRun() {
        if buffer.count > localStart { chunks.append(.local(localStart..<buffer.count)) }
        localStart = buffer.count
    }

    /// Sends as much as the socket takes.
    mutating func send(to fd: Int32) -> SendResult {
        closeLocalRun()
        while head < chunks.count {
            let n = sendSome(fd)
            if n > 0 {
                advance(by: n)
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && errno == EAGAIN {
                return .wouldBlock
            } else {
                return .failed
            }
        }
        reset()
        return .done
    }

    private mutating func reset() {
        // Keep a modest buffer for the next responses; let a huge one go.
        buffer.removeAll(keepingCapacity: keepsStorage && buffer.capacity <= 64 * 1024)
        // removeLast per chunk: removeAll(keepingCapacity:) is a general replaceSubrange,
        // about 180 instructions for the two chunks of a typical response.
        if keepsStorage {
            while !chunks.isEmpty { chunks.removeLast() }
        } else {
            chunks = []
        }
        localStart = 0
        head = 0
        sentInHead = 0
        pendingBytes = 0
    }

    private mutating func advance(by sent: Int) {
        var n = sent
        pendingBytes -= sent
        while n > 0 && head < chunks.count {
            let remaining = length(chunks[head]) - sentInHead
            if n >= remaining {
                n -= remaining
                head += 1
                sentInHead = 0
            } else {
                sentInHead += n
                n = 0
            }
        }
    }

    private func length(_ chunk: Chunk) -> Int {
        switch chunk {
        case .local(let r): return r.count
        case .shared(let b): return b.count
        }
    }

    /// One sendmsg over up to 16 pieces; array storage is only borrowed inside the
    /// nested `withUnsafeBytes` calls that gather it.
    private func sendSome(_ fd: Int32) -> Int {
        buffer.withUnsafeBytes { local in
            withUnsafeTemporaryAllocation(of: iovec.self, capacity: Self.maxIOVecs) { iovs in
                gather(index: head, local: local, iovs: iovs, count: 0, fd: fd)
            }
        }
    }

    private func gather(index: Int, local: UnsafeRawBufferPointer, iovs: UnsafeMutableBufferPointer<iovec>, count: Int, fd: Int32) -> Int {
        guard index < chunks.count, count < iovs.count else {
            var message = msghdr()
            message.msg_iov = iovs.baseAddress
            message.msg_iovlen = count
            return Glibc.sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
        }
        let skip = index == head ? sentInHead : 0
        switch chunks[index] {
        case .local(let range):
            guard let base = local.baseAddress else { return -1 }
            iovs[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: base + range.lowerBound + skip), iov_len: range.count - skip)
            return gather(index: index + 1, local: local, iovs: iovs, count: count + 1, fd: fd)
        case .shared(let bytes):
            return bytes.withUnsafeBytes { body in
                guard let base = body.baseAddress else { return -1 }
                iovs[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: base + skip), iov_len: body.count - skip)
                return gather(index: index + 1, local: local, iovs: iovs, count: count + 1, fd: fd)
            }
        }
    }
}
