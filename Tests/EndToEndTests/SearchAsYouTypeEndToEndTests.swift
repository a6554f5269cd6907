import Foundation
import Glibc
import Primitives
import Testing
import TestSupport

/// Typing a search letter by letter, as apps do, spends the upstream budget only on the
/// searches still wanted when their turn came, and the final one answers 200; people
/// behind one address never cancel, replace or refuse each other.
@Suite(.serialized, .offPool) struct SearchAsYouTypeEndToEndTests {
    /// iTunes at 30/min: a burst of 5, then one token every 2 s. UPSTREAM_QUEUE_WAIT_MS 4 s.
    static let environment = ["RATE_LIMIT_ITUNES_PER_MIN": "30", "UPSTREAM_QUEUE_WAIT_MS": "4000", "CACHE_TTL_PODCASTS": "3600"]
    static let keystrokes = (2..."javascript".count).map { String("javascript".prefix($0)) }  // "ja" … "javascript": 9 searches
    static let gap: useconds_t = 150_000

    static func send(_ port: Int, _ term: String) throws -> RawClient {
        let c = try RawClient(port: port, timeout: 8)
        try c.send("GET /podcasts?term=\(term) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        return c
    }

    static func metric(_ text: String, _ result: String) -> Int {
        let prefix = "feedproxy_upstream_queue_waits_total{source=\"itunes\",result=\"\(result)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }

    /// The app closes the connection of the superseded request when the next key is typed.
    @Test func cancelOnNextKeyKeepsTheBudgetForTheLastSearch() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            var previous: RawClient?
            let typing = Date()
            for term in Self.keystrokes {
                // Whatever has not answered by now is abandoned, as URLSession's cancel() does.
                previous?.close()
                previous = try Self.send(h.port, term)
                usleep(Self.gap)
            }
            // One token every 2 s: a loaded machine that types slower earns refills, and a
            // keystroke still queued then is rightly sent.
            let refills = Int(Date().timeIntervalSince(typing) / 2)
            let final = try #require(previous).readResponse()
            #expect(final.status == 200, "\(final.text)")
            let spent = h.upstream.requestCount(for: "itunes")
            // At most the burst that went out at once (still wanted then), the refills and the final
            // search: no abandoned keystroke spent a token.
            #expect(spent <= 6 + refills, "spent \(spent), refills \(refills)")
            let metrics = try h.get("/metrics").text
            #expect(Self.metric(metrics, "cancelled") >= max(0, 2 - refills), "\(metrics)")
            print("search-as-you-type (cancel on next key): \(Self.keystrokes.count) keystrokes, \(spent) upstream requests, final 200")
        }
    }

    /// Two people behind one address (a home router, an office, carrier-grade NAT) search
    /// at once while the budget is spent: each keeps their own place and gets their own
    /// answer; neither replaces the other's request.
    @Test func twoPeopleBehindOneAddressEachGetTheirOwnAnswer() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment.merging(["UPSTREAM_QUEUE_WAIT_MS": "8000"]) { $1 })
            for term in ["swift", "daily", "news", "music", "science"] { #expect(try h.get("/podcasts?term=\(term)").status == 200) }  // the burst
            // Two people behind 127.0.0.9, and someone else on 127.0.0.7 between their searches.
            let first = try RawClient(port: h.port, timeout: 12, source: "127.0.0.9")
            try first.send("GET /podcasts?term=history HTTP/1.1\r\nHost: localhost\r\n\r\n")
            usleep(200_000)
            let other = try RawClient(port: h.port, timeout: 12, source: "127.0.0.7")
            try other.send("GET /podcasts?term=gardening HTTP/1.1\r\nHost: localhost\r\n\r\n")
            usleep(200_000)
            let second = try RawClient(port: h.port, timeout: 12, source: "127.0.0.9")
            try second.send("GET /podcasts?term=cooking HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let answers = [try first.readResponse(), try second.readResponse(), try other.readResponse()]
            #expect(answers.map(\.status) == [200, 200, 200], "\(answers.map(\.text))")
            #expect(answers.allSatisfy { !$0.text.contains("superseded") })
            #expect(h.upstream.requestCount(for: "itunes") == 8)
        }
    }

    /// Thirty people behind one address, each typing a search (a request per key, the
    /// previous one aborted), under the default per-client quota: nobody sees a 429.
    @Test func thirtyPeopleBehindOneAddressTypingGetNo429() async throws {
        try await offPool {
            let h = try Harness(environment: ["CACHE_TTL_PODCASTS": "3600"], defaults: ["CLIENT_MISS_RATE_PER_MIN"])
            let results = Locked<[Int]>([])
            let group = DispatchGroup()
            for person in 0..<30 {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    usleep(useconds_t(person * 150_000))  // thirty people over about five seconds
                    let word = "person\(person)topic"
                    var previous: RawClient?
                    var final: RawClient?
                    for length in 8...11 {
                        previous?.close()  // the app aborts the superseded keystroke's fetch
                        guard let c = try? RawClient(port: h.port, timeout: 10, source: "127.0.0.7") else { return }
                        try? c.send("GET /podcasts?term=\(word.prefix(length)) HTTP/1.1\r\nHost: localhost\r\n\r\n")
                        previous = c
                        final = c
                        usleep(250_000)
                    }
                    let status = (try? final?.readResponse())?.status ?? 0
                    results.withLock { $0.append(status) }
                }
            }
            group.wait()
            let statuses = results.withLock { $0 }
            #expect(statuses.count == 30)
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            #expect(!(try h.get("/metrics").text.contains(#"reason="client_rate_limited""#)))
        }
    }

    /// A disconnect alone (no newer request) takes the queued miss out without a token.
    @Test func aDisconnectedClientsQueuedMissSpendsNoToken() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            for term in ["swift", "history", "daily", "news", "music"] { #expect(try h.get("/podcasts?term=\(term)").status == 200) }  // the burst
            let abandoned = try Self.send(h.port, "abandoned")
            usleep(300_000)
            abandoned.close()
            usleep(2_700_000)  // past the next token: a queued miss would have gone out by now
            #expect(h.upstream.requestCount(for: "itunes") == 5)
            let metrics = try h.get("/metrics").text
            #expect(Self.metric(metrics, "cancelled") == 1, "\(metrics)")
            #expect(metrics.contains(#"feedproxy_http_requests_total{route="/podcasts",status="499"} 1"#))
            // The budget is intact for the next client.
            #expect(try h.get("/podcasts?term=wanted").status == 200)
        }
    }

    @Test func aTermBelowTheMinimumIsA400() async throws {
        try await offPool {
            let h = try Harness(environment: ["PODCAST_MIN_TERM_CHARS": "3"])
            let r = try h.get("/podcasts?term=ja")
            #expect(r.status == 400)
            #expect(r.text.contains("term must be at least 3 characters"))
            #expect(h.upstream.requestCount(for: "itunes") == 0)
        }
    }
}
