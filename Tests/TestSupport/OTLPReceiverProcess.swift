import Foundation
import Glibc
import Primitives

/// A real OTLP/HTTP trace receiver on loopback (scripts/lib/otlp-receiver.py): it decodes each
/// export with the OpenTelemetry protobuf definitions and answers with what it received,
/// and can be told to fail or stall, or be paused (SIGSTOP) and killed like a collector.
public final class OTLPReceiverProcess: @unchecked Sendable {
    public let process: Spawned
    public let port: Int

    public init() throws {
        let script = FeedProxyProcess.repositoryRoot.appendingPathComponent("scripts/lib/otlp-receiver.py").path
        let heard = Locked<[UInt8]>([])
        process = try Spawned("/usr/bin/env", ["python3", script, "--port", "0"], capture: true) { bytes in heard.withLock { $0 += bytes } }
        var found: Int?
        let end = Date().addingTimeInterval(30)
        while found == nil, Date() < end {
            let text = String(decoding: heard.withLock { $0 }, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening ") }) { found = Int(line.dropFirst(10)) }
            if found == nil { usleep(20_000) }
        }
        guard let found else {
            process.terminate()
            throw Spawned.Failure.cannotSpawn("otlp-receiver.py: no port", 0)
        }
        port = found
    }

    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Everything received so far: `spans`, `requests`, `accepted`, `headers`, `bytes`.
    public func received() -> [String: Any] {
        guard let r = try? RawClient.get(port: port, "/spans") else { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:]
    }

    public var spans: [[String: Any]] { received()["spans"] as? [[String: Any]] ?? [] }

    /// `POST /control/…` (fail?status=&retry_after=&count=, delay?seconds=, reset).
    public func control(_ target: String) throws {
        let c = try RawClient(port: port)
        try c.send("POST /control/\(target) HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n")
        _ = try c.readResponse()
    }

    public func pause() { kill(process.processIdentifier, SIGSTOP) }
    public func resume() { kill(process.processIdentifier, SIGCONT) }

    public func stop() {
        resume()
        process.terminate()
        process.waitUntilExit()
    }

    deinit { if process.isRunning { stop() } }
}
