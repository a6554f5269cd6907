import Foundation
import Glibc

/// A blocking TCP client for socket-level tests: sends exact bytes, reads exact responses.
public final class RawClient: @unchecked Sendable {
    public let fd: Int32
    private var buffer: [UInt8] = []

    public struct Response {
        public let status: Int
        public let headers: [(String, String)]
        public let body: [UInt8]

        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public enum ClientError: Error { case connect(Int32), closed, malformed(String), timeout }

    /// `source` binds the client's end to that loopback address first (127.0.0.2, …), so
    /// one test can be several distinct peers.
    public init(port: Int, timeout: Double = 5, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if bound != 0 {
                let e = errno
                Glibc.close(fd)
                throw ClientError.connect(e)
            }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if rc != 0 {
            let e = errno
            Glibc.close(fd)
            throw ClientError.connect(e)
        }
    }

    private var isClosed = false

    deinit { if !isClosed { Glibc.close(fd) } }

    /// Closes the connection (a FIN), as an app does when it cancels a request.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(fd)
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw ClientError.closed }
            sent += n
        }
    }

    /// Sends a RST instead of a FIN when closed.
    public func abort() {
        var lin = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lin, socklen_t(MemoryLayout<linger>.size))
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    public func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { throw ClientError.closed }
        if n < 0 { throw errno == EAGAIN ? ClientError.timeout : ClientError.closed }
        buffer.append(contentsOf: chunk[0..<n])
    }

    /// Reads one response; `head` says the request was HEAD (no body follows).
    public func readResponse(head: Bool = false) throws -> Response {
        var headEnd: Int?
        while headEnd == nil {
            if let r = findHeadEnd() { headEnd = r } else { try fill() }
        }
        guard let end = headEnd else { throw ClientError.malformed("no head") }
        let headText = String(decoding: buffer[0..<end], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        guard !lines.isEmpty else { throw ClientError.malformed("empty head") }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw ClientError.malformed(headText) }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let c = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<c]), line[line.index(after: c)...].trimmingCharacters(in: .whitespaces))
        }
        buffer.removeFirst(end)
        let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
        let bodyLength = (head || status == 304 || status == 204 || status < 200) ? 0 : length
        while buffer.count < bodyLength { try fill() }
        let body = Array(buffer[0..<bodyLength])
        buffer.removeFirst(bodyLength)
        return Response(status: status, headers: headers, body: body)
    }

    /// The next chunk of a chunked body (empty: the last one), after `readResponse` read its head.
    public func readChunk() throws -> [UInt8] {
        func line() throws -> String {
            while true {
                if let i = buffer.firstIndex(of: 10), i > 0, buffer[i - 1] == 13 {
                    let text = String(decoding: buffer[0..<(i - 1)], as: UTF8.self)
                    buffer.removeFirst(i + 1)
                    return text
                }
                try fill()
            }
        }
        let sizeLine = try line()
        guard let size = Int(sizeLine.split(separator: ";").first.map(String.init) ?? "", radix: 16), size >= 0 else {
            throw ClientError.malformed("chunk size \(sizeLine)")
        }
        while buffer.count < size + 2 { try fill() }
        let data = Array(buffer[0..<size])
        buffer.removeFirst(size + 2)
        return data
    }

    /// Whether an answer (or a close) is waiting to be read, after waiting at most `seconds`.
    public func isReadable(within seconds: Double) -> Bool {
        if !buffer.isEmpty { return true }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, Int32(seconds * 1000)) > 0
    }

    /// True when the server has closed the connection (reads EOF within the timeout).
    public func isClosedByPeer() -> Bool {
        do {
            while true { try fill() }
        } catch ClientError.closed {
            return true
        } catch {
            return false
        }
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 3..<buffer.count where buffer[i] == 10 && buffer[i - 1] == 13 && buffer[i - 2] == 10 && buffer[i - 3] == 13 {
            return i + 1
        }
        return nil
    }

    /// One request, one response, on a fresh connection. `timeout` only keeps a broken server
    /// from hanging the test: a loaded machine must never reach it.
    public static func get(port: Int, _ target: String, headers: [String] = [], timeout: Double = 5) throws -> Response {
        let c = try RawClient(port: port, timeout: timeout)
        let extra = headers.map { $0 + "\r\n" }.joined()
        try c.send("GET \(target) HTTP/1.1\r\nHost: localhost\r\n\(extra)\r\n")
        return try c.readResponse()
    }
}
