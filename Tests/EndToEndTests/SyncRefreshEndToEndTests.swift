import Foundation
import Testing
import TestSupport

/// An app refreshing with its sync token, as docs/API.md's recipe says: keep the answer's
/// `syncToken` and `ETag`, send both back.
@Suite(.serialized, .offPool) struct SyncRefreshEndToEndTests {
    static func items(_ h: Harness, _ r: RawClient.Response) -> [String] {
        (h.json(r)["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    /// Issue 69: the first refresh with a token and the ETag of the answer that gave it (an
    /// answer without `sync`) is a 304 when nothing is new, on both routes; something new is a
    /// 200 whose own ETag stands for the refresh after it.
    @Test func theFirstRefreshWithATokenAndItsAnswersETagIsA304() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let (a, b) = (1_590_000_061, 1_590_000_062)
            let library = "/episodes?podcasts=\(a),\(b)"
            let first = try h.get(library)
            #expect(first.status == 200 && Self.items(h, first).count == 24, "\(first.text.prefix(500))")
            let token = try #require(h.json(first)["syncToken"] as? String)
            let etag = try #require(first.header("ETag"))
            let refresh = try h.get(library + "&sync=\(token)", headers: ["If-None-Match: \(etag)"])
            #expect(refresh.status == 304 && refresh.body.isEmpty, "\(refresh.text)")
            #expect(refresh.header("ETag") == etag)
            // As the 200 would carry them (docs/API.md): Age included.
            #expect(refresh.header("Age") == "0" && refresh.header("Cache-Control") == first.header("Cache-Control"), "\(refresh.headers)")
            // Whatever the limit of either: the tag names the state, not the page.
            #expect(try h.get(library + "&limit=5&sync=\(token)", headers: ["If-None-Match: \(etag)"]).status == 304)
            // The gzip variant by its own tag, the same way.
            let gzipTag = try #require(try h.get(library, headers: ["Accept-Encoding: gzip"]).header("ETag"))
            #expect(gzipTag == String(etag.dropLast()) + "-gz\"")
            #expect(try h.get(library + "&sync=\(token)", headers: ["Accept-Encoding: gzip", "If-None-Match: \(gzipTag)"]).status == 304)

            // The podcast route: its first page, then its token with its ETag.
            let podcast = "/podcasts/\(a)/episodes?limit=5"
            let page = try h.get(podcast)
            let pageToken = try #require(h.json(page)["syncToken"] as? String)
            let pageTag = try #require(page.header("ETag"))
            let pageRefresh = try h.get(podcast + "&sync=\(pageToken)", headers: ["If-None-Match: \(pageTag)"])
            #expect(pageRefresh.status == 304, "\(pageRefresh.text)")
            #expect(pageRefresh.header("ETag") == pageTag)
            // Again, the empty page now cached under its position: still a 304.
            #expect(try h.get(podcast + "&sync=\(pageToken)", headers: ["If-None-Match: \(pageTag)"]).status == 304)
            // Without the ETag: a 200 with nothing in it, the same token and the same ETag.
            let empty = try h.get(podcast + "&sync=\(pageToken)")
            #expect(empty.status == 200 && Self.items(h, empty).isEmpty)
            #expect(h.json(empty)["syncToken"] as? String == pageToken && empty.header("ETag") == pageTag)

            // Something new in b: a 200 with it, whose ETag stands for the next refresh.
            #expect(h.upstream.publish(podcast: b, at: Int(Date().timeIntervalSince1970)))
            #expect(try h.get("/hub/notify?id=\(b)").status == 202)
            var changed: RawClient.Response?
            #expect(
                waitUntil {
                    changed = try? h.get(library + "&sync=\(token)", headers: ["If-None-Match: \(etag)"])
                    return changed?.status == 200
                })
            let news = try #require(changed)
            #expect(Self.items(h, news).count == 1, "\(news.text)")
            let next = try #require(h.json(news)["syncToken"] as? String)
            let nextTag = try #require(news.header("ETag"))
            #expect(nextTag != etag)
            #expect(try h.get(library + "&sync=\(next)", headers: ["If-None-Match: \(nextTag)"]).status == 304)
            // Podcast a did not change: its refresh is still a 304.
            #expect(try h.get(podcast + "&sync=\(pageToken)", headers: ["If-None-Match: \(pageTag)"]).status == 304)
        }
    }

    /// Issue 67: a refresh that brings a new episode (a ping, here) reaches every page cut
    /// from the podcast's data at once, the empty sync page cached under its position
    /// included, long before CACHE_TTL_EPISODES (30 minutes) would.
    @Test func aRefreshReachesEveryPageCutFromTheDataAtOnce() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let a = 1_590_000_063
            let podcast = "/podcasts/\(a)/episodes?limit=5"
            let first = try h.get(podcast)
            #expect(first.status == 200 && Self.items(h, first).count == 5, "\(first.text.prefix(500))")
            let token = try #require(h.json(first)["syncToken"] as? String)
            let target = podcast + "&sync=\(token)"
            let empty = try h.get(target)
            #expect(empty.status == 200 && Self.items(h, empty).isEmpty, "\(empty.text)")
            let again = try h.get(target)
            #expect(again.header("X-Cache") == "HIT" && Self.items(h, again).isEmpty, "the cut page, cached under its position")

            #expect(h.upstream.publish(podcast: a, at: Int(Date().timeIntervalSince1970)))
            #expect(try h.get("/hub/notify?id=\(a)").status == 202)
            // The library route reads the data itself: once it has the episode, every route does.
            #expect(
                waitUntil {
                    guard let r = try? h.get("/episodes?podcasts=\(a)&sync=\(token)") else { return false }
                    return Self.items(h, r).count == 1
                })
            let fresh = try h.get(target, headers: ["If-None-Match: \(empty.header("ETag") ?? "-")"])
            #expect(fresh.status == 200 && Self.items(h, fresh).count == 1, "\(fresh.text)")
            #expect(h.json(fresh)["syncToken"] as? String != token)
            // The first page cut before the refresh, too: the new episode heads it.
            let page = try h.get(podcast)
            #expect(Self.items(h, page).first == Self.items(h, fresh).first && h.json(page)["syncToken"] as? String != token)
        }
    }
}
