import Foundation
import Glibc
import Testing
import TestSupport

/// Issue 19 against the real binary: nothing an outsider sends takes the process down.
@Suite(.offPool) struct HostileInputEndToEndTests {
    /// A feed of out-of-range dates and numbers (anyone can publish one in iTunes) answers
    /// 200 with nulls, and the process serves on.
    @Test func aHostileFeedAnswersWithNullsAndTheProcessLives() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let r = try h.get("/podcasts/1580000007/episodes")
            #expect(r.status == 200, "\(r.text)")
            let items = h.json(r)["items"] as? [[String: Any]] ?? []
            #expect(items.count == 4)
            #expect(items.first?["published"] is NSNull)
            #expect(items.first?["episode"] is NSNull)
            #expect(items.last?["published"] as? String == "2025-11-04T08:20:05Z")
            #expect(try h.get("/healthz").status == 200)
            #expect(h.proxy.process.isRunning)
        }
    }

    /// `http_proxy` and friends in the environment are never used: the SSRF check must see
    /// the feed's own address, not a proxy's.
    @Test func environmentProxiesAreIgnored() async throws {
        try await offPool {
            let trap = try ListeningSocket()
            defer { trap.close() }
            let proxy = "http://127.0.0.1:\(trap.port)"
            let h = try Harness(environment: [
                "ALLOW_PRIVATE_FEED_HOSTS": "true", "http_proxy": proxy, "HTTP_PROXY": proxy, "https_proxy": proxy, "ALL_PROXY": proxy, "all_proxy": proxy,
            ])
            #expect(try h.get("/photos?limit=1").status == 200)
            #expect(try h.get("/podcasts/1200361736/episodes?limit=1").status == 200)
            #expect(!trap.hasPendingConnection, "an upstream request went to the environment's proxy")
        }
    }

    @Test func anUpstreamProxyWithTheFeedCheckOnIsRefusedAtStartup() async throws {
        try await offPool {
            let result = try FeedProxyProcess.run([], environment: ["UPSTREAM_PROXY": "http://127.0.0.1:3128"])
            #expect(result.status == 2)
            #expect(result.stderr.contains("UPSTREAM_PROXY hides podcast feeds' addresses from FeedProxy's private-address check"))
            let bad = try FeedProxyProcess.run(["--upstream-proxy", "ftp://x"])
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("UPSTREAM_PROXY must be an http://, https://, socks5:// or socks5h:// URL"))
        }
    }

    /// A proxy in front that is not in TRUSTED_PROXIES, with the quota on: its misses are
    /// counted and logged once, so a forgotten setting shows on day one.
    @Test func forwardedRequestsFromAnUntrustedPeerAreCountedAndLogged() async throws {
        try await offPool {
            let h = try Harness(environment: ["CLIENT_MISS_RATE_PER_MIN": "600"])
            for term in ["a1", "a2", "a3"] { #expect(try h.get("/podcasts?term=\(term)", headers: ["X-Forwarded-For: 203.0.113.9"]).status == 200) }
            #expect(try h.get("/podcasts?term=a4").status == 200)  // no header: not counted
            // Cached answers are not counted: the same target again (the hot path), and another
            // spelling of it, found off the loop by the same visit that would have started a fetch.
            for again in ["/podcasts?term=a1", "/podcasts?term=%611"] {
                #expect(try h.get(again, headers: ["X-Forwarded-For: 203.0.113.9"]).header("X-Cache") == "HIT")
            }
            let metrics = try h.get("/metrics").text
            #expect(metrics.contains("feedproxy_untrusted_forwarded_for_total 3"), "\(metrics)")
            let warned = { h.proxy.logLines.filter { $0.contains("X-Forwarded-For from a peer outside TRUSTED_PROXIES") } }
            _ = waitUntil { !warned().isEmpty }  // the log writer flushes on its own thread
            usleep(300_000)  // and a second warning, were there one, would be flushed by now
            let warnings = h.proxy.logLines.filter { $0.contains("X-Forwarded-For from a peer outside TRUSTED_PROXIES") }
            #expect(warnings.count == 1, "\(warnings)")
        }
    }
}

/// A listening socket nobody accepts on: a connection attempt shows as a pending accept.
final class ListeningSocket: @unchecked Sendable {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        port = Int(UInt16(bigEndian: addr.sin_port))
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    var hasPendingConnection: Bool {
        let client = accept(fd, nil, nil)
        guard client >= 0 else { return false }
        Glibc.close(client)
        return true
    }

    func close() { Glibc.close(fd) }
}
