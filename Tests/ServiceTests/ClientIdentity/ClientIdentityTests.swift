import Primitives
import HTTPServer
import TestSupport
import Testing
import Upstream
@testable import Service

@Suite(.offPool) struct ClientIdentityTests {
    static func ip(_ text: String) -> IPAddress {
        guard let ip = IPAddress(text) else {
            Issue.record("could not parse \(text)")
            return IPAddress(high: 0, low: 0)
        }
        return ip
    }

    @Test func addressesParseStrictlyAndFormatBack() {
        #expect(Self.ip("192.0.2.7").description == "192.0.2.7")
        #expect(Self.ip("192.0.2.7").isIPv4)
        #expect(Self.ip("2001:db8::1").description == "2001:db8::1")
        #expect(Self.ip("::ffff:192.0.2.7") == Self.ip("192.0.2.7"))
        for bad in ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.4:80", "[::1]", "::1%eth0", "1..2.3", "abc", "1.2.3.4 ", "12345::1::2", "\u{0}1.2.3.4"] {
            #expect(IPAddress(bad) == nil, "\(bad) parsed")
        }
    }

    @Test func cidrRangesMatchByPrefix() throws {
        let net = try #require(CIDR("10.1.0.0/16"))
        #expect(net.contains(Self.ip("10.1.255.3")))
        #expect(!net.contains(Self.ip("10.2.0.1")))
        #expect(net.description == "10.1.0.0/16")
        #expect(try #require(CIDR("10.1.2.3/8")).description == "10.0.0.0/8")
        #expect(try #require(CIDR("0.0.0.0/0")).contains(Self.ip("203.0.113.9")))
        #expect(try #require(CIDR("0.0.0.0/0")).contains(Self.ip("2001:db8::1")) == false)
        #expect(try #require(CIDR("2001:db8::/32")).contains(Self.ip("2001:db8:ffff::1")))
        #expect(try #require(CIDR("127.0.0.1")).contains(Self.ip("127.0.0.1")))
        for bad in ["10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "::/129", "10.0.0/8", "x/8", "10.0.0.0/8/8", "10.0.0.0/1a"] {
            #expect(CIDR(bad) == nil, "\(bad) parsed")
        }
    }

    @Test func trustedProxiesConfigurationIsCheckedAtStartup() throws {
        guard case .run(let c) = try ConfigurationParser.parse(arguments: [], environment: ["TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.1 ,::1/128"]) else {
            Issue.record("expected run")
            return
        }
        #expect(c.trustedProxies.ranges.count == 3)
        #expect(c.trustedProxies.description == "10.0.0.0/8,192.168.1.1/32,::1/128")
        do {
            _ = try ConfigurationParser.parse(arguments: ["--trusted-proxies", "10.0.0.0/8,10.0.0.300"], environment: [:])
            Issue.record("bad CIDR accepted")
        } catch {
            #expect(error.description.contains("TRUSTED_PROXIES"))
            #expect(error.description.contains("10.0.0.300"))
        }
        guard case .run(let defaults) = try ConfigurationParser.parse(arguments: [], environment: [:]) else { return }
        #expect(defaults.trustedProxies.isEmpty && defaults.upstreamQueueWaitMs == 3000 && defaults.clientMissRatePerMinute == 600)
    }

    @Test func forwardedForIsIgnoredFromAnUntrustedPeer() {
        let resolver = ClientResolver(trusted: TrustedProxies())
        let headers = RequestHeaders([("X-Forwarded-For", "198.51.100.1")])
        #expect(resolver.client(peer: Self.ip("203.0.113.5"), headers: headers) == Self.ip("203.0.113.5"))
        let some = ClientResolver(trusted: TrustedProxies([CIDR("10.0.0.0/8")].compactMap { $0 }))
        #expect(some.client(peer: Self.ip("203.0.113.5"), headers: headers) == Self.ip("203.0.113.5"))
        #expect(some.client(peer: nil, headers: headers) == nil)
    }

    @Test func theRightMostUntrustedHopIsTheClient() {
        let resolver = ClientResolver(trusted: TrustedProxies([CIDR("10.0.0.0/8"), CIDR("2001:db8::/32")].compactMap { $0 }))
        let proxy = Self.ip("10.0.0.2")
        func resolve(_ values: String...) -> String? {
            resolver.client(peer: proxy, headers: RequestHeaders(values.map { ("X-Forwarded-For", $0) }))?.description
        }
        #expect(resolve("198.51.100.1") == "198.51.100.1")
        // The client may send any list; only what our proxies appended counts.
        #expect(resolve("1.1.1.1, 198.51.100.1") == "198.51.100.1")
        #expect(resolve("1.1.1.1, 198.51.100.1, 10.0.0.9") == "198.51.100.1")
        #expect(resolve("1.1.1.1", "198.51.100.1, 10.9.9.9") == "198.51.100.1")
        #expect(resolve("198.51.100.1:4711") == "198.51.100.1")
        #expect(resolve("[2001:db9::5]:443") == "2001:db9::5")
        #expect(resolve("2001:db9::5, 2001:db8::1") == "2001:db9::5")
        // Every hop trusted: the left-most stands.
        #expect(resolve("10.0.0.7, 10.0.0.8") == "10.0.0.7")
        // No header: the proxy itself.
        #expect(resolve() == "10.0.0.2")
        // Garbage never crashes and never becomes an identity: the last trusted hop stands.
        #expect(resolve("garbage") == "10.0.0.2")
        #expect(resolve("198.51.100.1, unknown") == "10.0.0.2")
        #expect(resolve("unknown, 10.0.0.3") == "10.0.0.3")
        for junk in ["", ",,,", "[", "[::1", "[::1]x", "1.2.3.4:x", "\"", "::::::::", String(repeating: "1.2.3.4,", count: 5000), "%ff", "\u{1F600}"] {
            _ = resolve(junk)
        }
        #expect(resolve(String(repeating: "10.0.0.1,", count: 100) + "10.0.0.1") == "10.0.0.1")
    }

    @Test func clientQuotaRefillsAndIsPerClient() {
        let limiter = ClientLimiter(perMinute: 30, maxClients: 10)  // burst 5, one per 2 s
        let a = ClientKey(high: 0, low: 1), b = ClientKey(high: 0, low: 2)
        for _ in 0..<5 { #expect(limiter.admit(a, now: 100) == nil) }
        let after = limiter.admit(a, now: 100)
        #expect(after != nil && abs((after ?? 0) - 2) < 0.01)
        #expect(limiter.admit(b, now: 100) == nil)
        #expect(limiter.admit(a, now: 102.1) == nil)
        #expect(limiter.admit(a, now: 102.1) != nil)
        // A fetch answered from the shared cache gives its token back, up to the burst.
        limiter.refund(a)
        #expect(limiter.admit(a, now: 102.1) == nil)
        #expect(limiter.admit(a, now: 102.1) != nil)
        for _ in 0..<20 { limiter.refund(b) }
        for _ in 0..<5 { #expect(limiter.admit(b, now: 100) == nil) }
        #expect(limiter.admit(b, now: 100) != nil)
    }

    @Test func clientStateIsABoundedLRU() {
        let limiter = ClientLimiter(perMinute: 6, maxClients: 3)  // burst 1
        func key(_ n: UInt64) -> ClientKey { ClientKey(high: 0, low: n) }
        for n: UInt64 in 1...3 { #expect(limiter.admit(key(n), now: 0) == nil) }
        #expect(limiter.admit(key(1), now: 0) != nil)  // 1 is now the most recent
        #expect(limiter.admit(key(4), now: 0) == nil)  // evicts 2, the least recently seen
        #expect(limiter.trackedClients == 3)
        #expect(limiter.admit(key(1), now: 0) != nil)  // still remembered
        #expect(limiter.admit(key(3), now: 0) != nil)  // still remembered
        #expect(limiter.admit(key(2), now: 0) == nil)  // forgotten, so a fresh bucket (evicts 4)
        #expect(limiter.admit(key(4), now: 0) == nil)
        #expect(limiter.trackedClients == 3)
        // Heavy churn stays within the bound.
        for n in 10..<10_000 { _ = limiter.admit(key(UInt64(n)), now: 1) }
        #expect(limiter.trackedClients == 3)
    }
}
