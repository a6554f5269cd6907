import Foundation
import Glibc
import HTTPServer
import Synchronization

/// A loopback upstream built on the project's own HTTPServer, with fault modes.
public final class FaultUpstream: Sendable {
    public let server: Server
    private let hits = Atomic<Int>(0)

    public init() throws {
        var router = Router<BasicRequestContext>()
        let box = HitCounter()
        router.get("/ok") { _ in
            box.increment(); return .response(.json(Array("{\"ok\":true}".utf8)))
        }
        router.add("POST", "/echo") { req in
            box.increment(); return .response(.json(req.request.body))
        }
        router.get("/headers") { req in
            box.increment()
            let ua = req.request.headers["user-agent"] ?? ""
            let custom = req.request.headers["x-custom"] ?? ""
            let trace = req.request.headers["traceparent"] ?? "", state = req.request.headers["tracestate"] ?? ""
            return .response(.json(Array("{\"ua\":\"\(ua)\",\"custom\":\"\(custom)\",\"traceparent\":\"\(trace)\",\"tracestate\":\"\(state)\"}".utf8)))
        }
        router.get("/slow") { req in
            box.increment()
            let ms = Int(req.request.query("ms") ?? "") ?? 500
            return .deferred { _ in
                try? await Task.sleep(for: .milliseconds(ms))
                return .json(Array("{\"slow\":true}".utf8))
            }
        }
        router.get("/hang") { _ in
            box.increment()
            return .deferred { _ in
                try? await Task.sleep(for: .seconds(30))
                return .json(Array("{}".utf8))
            }
        }
        router.get("/status/:code") { req in
            box.increment()
            let code = Int(req.pathParameters["code"] ?? "") ?? 500
            var r = Response(status: code, body: Array("<html><body><h1>\(code) Error</h1></body></html>".utf8))
            r.headers.add("Content-Type", "text/html")
            return .response(r)
        }
        router.get("/big") { req in
            box.increment()
            let n = Int(req.request.query("bytes") ?? "") ?? 1000
            return .response(.json(Array(repeating: UInt8(ascii: "x"), count: n)))
        }
        router.get("/redirect-loop") { _ in
            box.increment()
            var r = Response(status: 302)
            r.headers.add("Location", "/redirect-loop")
            return .response(r)
        }
        router.get("/redirect") { req in
            box.increment()
            var r = Response(status: 302)
            r.headers.add("Location", req.request.query("to") ?? "/ok")
            return .response(r)
        }
        var config = ServerConfiguration()
        config.host = "127.0.0.1"
        config.port = 0
        config.threads = 1
        config.drainTimeout = 0.5
        server = Server(configuration: config, router: router)
        try server.start()
        counter = box
    }

    private let counter: HitCounter
    public var requestCount: Int { counter.value }
    public var base: String { "http://127.0.0.1:\(server.port)" }
    public func url(_ path: String) -> String { base + path }
    public func stop() { server.shutdown() }
}

final class HitCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Raw TCP faults HTTPServer would never produce: truncated bodies and resets.
public final class RawFaultServer: @unchecked Sendable {
    public enum Mode: Sendable { case truncatedBody, resetAfterRequest, acceptAndSilence }
    public let port: Int
    private let fd: Int32
    private let stopFlag: StopFlag

    public init(mode: Mode) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(fd, 64)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        port = Int(UInt16(bigEndian: addr.sin_port))
        let listener = fd
        let flag = StopFlag()
        stopFlag = flag
        Thread {
            var held: [Int32] = []
            while !flag.isSet {
                let c = accept(listener, nil, nil)
                if c < 0 { break }
                var buf = [UInt8](repeating: 0, count: 4096)
                _ = recv(c, &buf, buf.count, 0)
                switch mode {
                case .truncatedBody:
                    let msg = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"partial\":"
                    _ = msg.withCString { send(c, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                    close(c)
                case .resetAfterRequest:
                    var lin = linger(l_onoff: 1, l_linger: 0)
                    setsockopt(c, SOL_SOCKET, SO_LINGER, &lin, socklen_t(MemoryLayout<linger>.size))
                    close(c)
                case .acceptAndSilence:
                    held.append(c)
                }
            }
            for c in held { close(c) }
        }.start()
    }

    public var url: String { "http://127.0.0.1:\(port)/" }

    public func stop() {
        stopFlag.set()
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}

final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
