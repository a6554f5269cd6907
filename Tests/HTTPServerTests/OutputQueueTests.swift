import Glibc
import TestSupport
import Testing
@testable import HTTPServer

@Suite(.offPool) struct OutputQueueTests {
    /// Heads copied, large bodies referenced, partial writes resumed: the peer reads
    /// exactly the bytes appended, in order.
    @Test func interleavedPiecesArriveInOrderAcrossPartialWrites() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var small: Int32 = 4096
        setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)

        var queue = OutputQueue()
        var expected: [UInt8] = []
        for i in 0..<40 {
            let head = Array("HEAD \(i)\r\n".utf8)
            let body = [UInt8](repeating: UInt8(65 + i % 26), count: i % 3 == 0 ? 100 : 10_000 + i)
            queue.append(contentsOf: head)
            queue.appendBody(body)
            expected += head + body
        }
        let pending = queue.pendingBytes  // (#expect cannot take a non-copyable value apart)
        #expect(pending == expected.count)

        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var rounds = 0
        while rounds < 10_000 {
            rounds += 1
            let result = queue.send(to: fds[0])
            let n = buffer.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { received += buffer[0..<n] }
            if case .done = result, received.count == expected.count { break }
            if case .failed = result { Issue.record("send failed"); return }
        }
        #expect(received == expected)
        let drained = queue.isEmpty
        #expect(drained)
        #expect(rounds > 1)  // it really went through partial writes
    }
}
