import Feeds
import Foundation
import Primitives
import ResponseCache
import TestSupport
import Testing
import Upstream
@testable import HTTPServer
@testable import Service

/// The feed route and the rendering of cached entries, as units: no socket, no binary.
@Suite(.offPool) struct FeedRouteTests {
    static func request(_ target: String, headers: [(String, String)] = []) -> MeteredRequestContext {
        .make(target: target, headers: headers)
    }

    static func handle(_ route: FeedRoute, _ target: String, headers: [(String, String)] = []) -> MeteredResult {
        var context = request(target, headers: headers)
        return route.handle(&context)
    }

    static func render(_ entry: CachedResponse, _ target: String, headers: [(String, String)] = [], _ status: CachedRendering.CacheStatus, now: Double)
        -> Response
    {
        var context = request(target, headers: headers)
        return CachedRendering.response(entry, for: &context, cacheStatus: status, now: now)
    }

    static func route() throws -> (FeedRoute, ResponseCache) {
        var c = Configuration()
        c.dataDirectory = nil  // no records file written by a unit test
        c[Setting.flickrFeedURL] = "http://127.0.0.1:9/feed"  // never reached: these tests stop before the upstream
        let services = try Services(c, logLanes: 1)
        return (services.feedRoute(FlickrAdapter(feedURL: c[Setting.flickrFeedURL]), ttl: 60), services.cache)
    }

    static func response(_ result: MeteredResult) -> Response? {
        if case .response(let r) = result { return r }
        return nil
    }

    @Test func anInvalidParameterIsA400WithTheOneErrorShape() throws {
        let (route, _) = try Self.route()
        let r = try #require(Self.response(Self.handle(route, "/photos?limit=500")))
        #expect(r.status == 400)
        let json = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: [String: Any]]
        #expect(json?["error"]?["code"] as? String == "invalid_parameter")
        #expect(json?["error"]?["status"] as? Int == 400)
        #expect(r.headers["cache-control"] == "no-store")
    }

    /// A target not seen before is looked up by key in the deferred work that would join or
    /// start its flight (one visit to the cache); from then on its fresh entry is answered on
    /// the loop.
    @Test func aFreshEntryIsAnsweredOnTheLoopWithItsHeaders() async throws {
        let (route, cache) = try Self.route()
        let body = Array(#"{"source":"flickr"}"#.utf8)
        let entry = CachedResponse(
            body: body, gzippedBody: Gzip.compress(body), storedAt: cache.now, policy: FreshnessPolicy(ttl: 60, staleWhileRevalidate: 600, staleIfError: 0))
        let prepared = try FlickrAdapter(feedURL: "http://127.0.0.1:9/feed").prepare(QueryParameters([("limit", "5")]))
        cache.store(entry, for: prepared.cacheKey)
        var first = Self.request("/photos?limit=5")
        guard case .deferred(let work) = route.handle(&first) else {
            Issue.record("a target not seen before is looked up with its flight, off the loop")
            return
        }
        let found = await work(&first)
        #expect(found.body == body && found.constantHeaders == Array("X-Cache: HIT\r\n".utf8))
        let r = try #require(Self.response(Self.handle(route, "/photos?limit=5")))
        #expect(r.status == 200)
        #expect(r.body == body)
        #expect(r.constantHeaders == Array("X-Cache: HIT\r\n".utf8))
        // The entry's own lines are rendered once, with the entry: Cache-Control, then the
        // representation's ETag and Content-Type.
        #expect(r.representation === entry.representation)
        let lines = String(decoding: r.renderedHeaders + r.representation.headerLines, as: UTF8.self)
        #expect(lines.contains("ETag: \(entry.etag)\r\n"))
        #expect(lines.contains("Cache-Control: public, max-age=60, stale-while-revalidate=600, stale-if-error=0\r\n"))
        // The same entry, asked for with its ETag: a 304 with the validator and no body.
        let again = try #require(Self.response(Self.handle(route, "/photos?limit=5", headers: [("If-None-Match", entry.etag)])))
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.headers["etag"] == entry.etag)
    }

    /// A route's parameters as a form: the adapter reads the form's fields (a bad one is the
    /// same 400 a query's is), another body type is a 415, and a form seen before is answered
    /// on the loop from the entry its GET would get (the fast path knows it by the body's digest).
    @Test func aFormIsTheSameParametersAsAQuery() async throws {
        let (route, cache) = try Self.route()
        func post(_ body: String, type: String = "application/x-www-form-urlencoded") -> MeteredRequestContext {
            .make(method: "POST", target: "/photos", headers: [("Content-Type", type)], body: Array(body.utf8))
        }
        var plain = post("limit=5", type: "text/plain")
        #expect(Self.response(route.handleForm(&plain))?.status == 415)
        var bad = post("limit=500")
        #expect(Self.response(route.handleForm(&bad))?.status == 400)
        let body = Array(#"{"source":"flickr"}"#.utf8)
        let entry = CachedResponse(
            body: body, gzippedBody: Gzip.compress(body), storedAt: cache.now, policy: FreshnessPolicy(ttl: 60, staleWhileRevalidate: 600, staleIfError: 0))
        cache.store(entry, for: try FlickrAdapter(feedURL: "http://127.0.0.1:9/feed").prepare(QueryParameters([("limit", "5")])).cacheKey)
        var first = post("limit=5")
        guard case .deferred(let work) = route.handleForm(&first) else {
            Issue.record("a form not seen before is looked up with its flight, off the loop")
            return
        }
        #expect(await work(&first).body == body)
        var again = post("limit=5")
        #expect(Self.response(route.handleForm(&again))?.body == body, "answered on the loop")
        var other = post("limit=6")
        if case .response = route.handleForm(&other) { Issue.record("another form is not the first one's alias") }
        // RFC 9110 §13.1.2: a POST whose If-None-Match names the answer is a 412, never a 304.
        var conditional = MeteredRequestContext.make(
            method: "POST", target: "/photos", headers: [("Content-Type", "application/x-www-form-urlencoded"), ("If-None-Match", entry.etag)],
            body: Array("limit=5".utf8))
        let refused = Self.response(route.handleForm(&conditional))
        #expect(refused?.status == 412, "\(String(describing: refused?.status))")
        #expect(refused.map { String(decoding: $0.body, as: UTF8.self) }?.contains("precondition_failed") == true)
    }

    /// Deferred work gets the request's context and hands it back: what a miss learned (its
    /// deadline, from when the request arrived; its log fields) reaches the access log and
    /// the span through it.
    @Test func aMissFillsInTheRequestsContext() async throws {
        let (route, _) = try Self.route()
        var context = MeteredRequestContext.make(target: "/photos?limit=3", peer: IPAddress("192.0.2.7"))
        guard case .deferred(let work) = route.handle(&context) else {
            Issue.record("a miss answers off the loop")
            return
        }
        #expect(context.deadline == nil)  // nothing decided on the loop
        let response = await work(&context)
        #expect(response.status >= 500)  // nothing listens on port 9
        #expect(context.deadline == context.receivedAt + route.upstream.budgetSeconds)
        #expect(context.logFields.map(\.0) == ["cache", "upstream_ms"])
    }

    /// A client's quota token is given back only when nothing was sent: our own refusals,
    /// and a caller that left while it still waited for its upstream turn.
    /// Failures the upstream gave, or a fetch cancelled mid-way, were real upstream work.
    @Test(
        arguments: [
            (UpstreamError.rateLimited(retryAfter: 2), false), (.circuitOpen(retryAfter: 5), false), (.cancelledWhileQueued, false),
            (.timeout, true), (.httpStatus(500), true), (.cancelled, true), (.connectFailure, true),
        ] as [(UpstreamError, Bool)])
    func onlyWhatLeftForTheUpstreamCostsTheClient(_ error: UpstreamError, _ costs: Bool) {
        let failure = FeedRoute.loadError(error, source: "flickr", negativeTTL: 0, now: 0)
        #expect(FeedRoute.costTheUpstream(.failed(failure)) == costs)
        // Waiting replicas answer an upstream's failure, never this replica's refusal or cancellation.
        #expect(failure.sharedWithWaiters == (costs && error != .cancelled))
    }
}

@Suite(.offPool) struct CachedRenderingTests {
    static let body = Array(#"{"items":[]}"#.utf8)
    static let entry = CachedResponse(
        body: body, gzippedBody: Gzip.compress(body), storedAt: 100, policy: FreshnessPolicy(ttl: 60, staleWhileRevalidate: 0, staleIfError: 0))

    @Test func ageCountsFromTheFetchAndTheVariantPicksItsOwnETag() {
        let plain = FeedRouteTests.render(Self.entry, "/x", .hit, now: 130.9)
        #expect(plain.age == 30)
        #expect(String(decoding: plain.representation.headerLines, as: UTF8.self).contains("ETag: \(Self.entry.etag)\r\n"))
        // Which variant is sent is the writer's choice (ResponseWriterTests); each has its own tag.
        let gzip = FeedRouteTests.render(Self.entry, "/x", headers: [("Accept-Encoding", "gzip")], .stale, now: 130)
        #expect(String(decoding: gzip.representation.gzipHeaderLines, as: UTF8.self).contains("ETag: \(Self.entry.representation.gzipETag)\r\n"))
        // A 304 to a gzip request is for the gzip variant's tag.
        let matched = FeedRouteTests.render(
            Self.entry, "/x", headers: [("Accept-Encoding", "gzip"), ("If-None-Match", Self.entry.representation.gzipETag)], .hit, now: 130)
        #expect(matched.status == 304 && matched.headers["etag"] == Self.entry.representation.gzipETag)
        #expect(gzip.constantHeaders == Array("X-Cache: STALE\r\n".utf8))
        // The other representation's tag does not match this one.
        let mismatched = FeedRouteTests.render(Self.entry, "/x", headers: [("If-None-Match", Self.entry.representation.gzipETag)], .hit, now: 130)
        #expect(mismatched.status == 200)
    }

    @Test func anAbsurdClockGivesABoundedAge() {
        let r = FeedRouteTests.render(Self.entry, "/x", .hit, now: 1e300)
        #expect(r.age == Int(Int32.max))
    }
}

@Suite(.offPool) struct RouteTableTests {
    @Test func theIndexListsEveryPublicRouteOnceInOrder() {
        #expect(
            RouteDeclaration.listed(RouteDeclaration.all) == [
                "/photos", "/podcasts?term=", "/podcasts/{id}", "/podcasts/{id}/episodes", "/podcasts/{id}/episodes/{episodeId}", "/episodes?podcasts=",
                "/episodes/events?podcasts=", "/episodes/events/library", "/hub/notify?url=", "/hub/websub",
                "/podcasts/byfeedurl?url=", "/library/opml", "/library/opml/export", "/loans", "/loans/{id}", "/images?url=&w=&sig=", "/healthz",
                "/readyz", "/metrics",
                "/openapi.json", "/demo",
            ])
        #expect(Set(RouteDeclaration.all.map { "\($0.method) \($0.name.path)" }).count == RouteDeclaration.all.count)
    }
}
