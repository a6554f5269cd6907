import Foundation
import FixtureUpstream
import Service
import TestSupport

/// A fixture upstream in this process plus the real binary pointed at it.
final class Harness: @unchecked Sendable {
    let upstream: FixtureUpstream
    let proxy: FeedProxyProcess

    /// `defaults`: settings left at the service's own default instead of the harness's
    /// test values (e.g. `CLIENT_MISS_RATE_PER_MIN`, off here unless named).
    init(environment: [String: String] = [:], arguments: [String] = [], kivaREST: Bool = false, defaults: Set<String> = []) throws {
        upstream = try FixtureUpstream(directory: FeedProxyProcess.repositoryRoot.appendingPathComponent("Fixtures").path)
        var env = Self.upstreamEnvironment(upstream)
        for variable in UpstreamCatalog.rateLimitVariables { env[variable] = "6000" }
        // Tests send many misses from one address; the per-client quota is tested on its own.
        env["CLIENT_MISS_RATE_PER_MIN"] = "0"
        if kivaREST { env["KIVA_LOANS_URL"] = upstream.kivaRESTURL }
        for (k, v) in environment { env[k] = v }
        for k in defaults { env[k] = nil }
        proxy = try FeedProxyProcess(arguments: arguments, environment: env)
    }

    var port: Int { proxy.port }

    /// Every upstream at this fixture upstream, as the declarations name them: what a second
    /// replica against the same upstream is started with.
    static func upstreamEnvironment(_ upstream: FixtureUpstream) -> [String: String] {
        UpstreamCatalog.fixtureEnvironment(baseURL: upstream.baseURL)
    }

    func get(_ target: String, headers: [String] = [], timeout: Double = 5) throws -> RawClient.Response {
        try RawClient.get(port: port, target, headers: headers, timeout: timeout)
    }

    /// A POST with a body of its own type, on a fresh connection.
    func post(_ target: String, body: [UInt8], type: String, headers: [String] = [], timeout: Double = 5) throws -> RawClient.Response {
        let c = try RawClient(port: port, timeout: timeout)
        let extra = headers.map { $0 + "\r\n" }.joined()
        try c.send("POST \(target) HTTP/1.1\r\nHost: localhost\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n\(extra)\r\n")
        try c.send(body)
        return try c.readResponse()
    }

    /// Entries this replica has stored in the shared tier (`/metrics`): it stores right after
    /// replying, so a test about another replica waits for this rather than for a time.
    var sharedStores: Int {
        let metrics = (try? get("/metrics").text) ?? ""
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("feedproxy_l2_events_total{event=\"stored\"}") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    func json(_ r: RawClient.Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:]
    }

    deinit {
        proxy.stop()
        upstream.stop()
    }
}
