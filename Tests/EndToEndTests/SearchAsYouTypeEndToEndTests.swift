import Foundation
import Glibc
import Testing
import TestSupport

/// Issue 21: typing a search letter by letter, as the app does, spends the upstream budget
/// only on the searches still wanted when their turn came, and the final one answers 200.
@Suite(.serialized) struct SearchAsYouTypeEndToEndTests {
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
    @Test func cancelOnNextKeyKeepsTheBudgetForTheLastSearch() throws {
        let h = try Harness(environment: Self.environment)
        var previous: RawClient?
        var answeredBeforeNextKey = 0
        for term in Self.keystrokes {
            if let p = previous {
                // Whatever has not answered by now is abandoned, as URLSession's cancel() does.
                if p.isReadable(within: 0.01), (try? p.readResponse())?.status == 200 { answeredBeforeNextKey += 1 }
                p.close()
            }
            previous = try Self.send(h.port, term)
            usleep(Self.gap)
        }
        let final = try #require(previous).readResponse()
        #expect(final.status == 200, "\(final.text)")
        let spent = h.upstream.requestCount(for: "itunes")
        // At most: the burst that went out at once (still wanted then) and the final search.
        #expect(spent <= answeredBeforeNextKey + 1, "spent \(spent), wanted \(answeredBeforeNextKey + 1)")
        #expect(spent <= 6)
        let metrics = try h.get("/metrics").text
        #expect(Self.metric(metrics, "cancelled") + Self.metric(metrics, "superseded") >= 2, "\(metrics)")
        print("search-as-you-type (cancel on next key): \(Self.keystrokes.count) keystrokes, \(spent) upstream requests, final 200")
    }

    /// The app keeps every request open: the same client's newer search supersedes the
    /// older one still queued, which answers 503 superseded at once.
    @Test func aNewerSearchSupersedesTheClientsQueuedOne() throws {
        let h = try Harness(environment: Self.environment)
        var open: [RawClient] = []
        for term in Self.keystrokes {
            open.append(try Self.send(h.port, term))
            usleep(Self.gap)
        }
        let responses = try open.map { try $0.readResponse() }
        #expect(responses.last?.status == 200, "\(responses.last?.text ?? "")")
        let superseded = responses.filter { $0.status == 503 && $0.text.contains("\"superseded\"") }
        #expect(superseded.count >= 2, "\(responses.map(\.status))")
        #expect(responses.allSatisfy { $0.status == 200 || $0.text.contains("\"superseded\"") }, "\(responses.map(\.text))")
        #expect(h.upstream.requestCount(for: "itunes") <= 6)
        #expect(Self.metric(try h.get("/metrics").text, "superseded") == superseded.count)
    }

    /// A disconnect alone (no newer request) takes the queued miss out without a token.
    @Test func aDisconnectedClientsQueuedMissSpendsNoToken() throws {
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

    @Test func aTermBelowTheMinimumIsA400() throws {
        let h = try Harness(environment: ["PODCAST_MIN_TERM_CHARS": "3"])
        let r = try h.get("/podcasts?term=ja")
        #expect(r.status == 400)
        #expect(r.text.contains("term must be at least 3 characters"))
        #expect(h.upstream.requestCount(for: "itunes") == 0)
    }
}
