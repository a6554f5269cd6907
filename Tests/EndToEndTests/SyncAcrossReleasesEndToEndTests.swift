import EpisodeSync
import Feeds
import Foundation
import Service
import Testing
import TestSupport

/// Issue 67: a sync token outlives what a cache entry does not: a restart of the single node,
/// a release (its shared-cache keys change with the schema fingerprint) and two releases side
/// by side. The podcast's change history is a record (`EpisodeHistory` in `FeedRecords`).
@Suite(.serialized, .offPool) struct SyncAcrossReleasesEndToEndTests {
    static func items(_ r: RawClient.Response) -> [[String: Any]] {
        ((try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any])?["items"] as? [[String: Any]] ?? []
    }

    static func field(_ r: RawClient.Response, _ name: String) -> Any? {
        ((try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any])?[name]
    }

    static func environment(_ h: Harness, _ extra: [String: String]) -> [String: String] {
        var env = Harness.upstreamEnvironment(h.upstream)
        for variable in UpstreamCatalog.rateLimitVariables { env[variable] = "6000" }
        env["CLIENT_MISS_RATE_PER_MIN"] = "0"
        env["ALLOW_PRIVATE_FEED_HOSTS"] = "true"
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// One node, its data directory kept: restarted as a release would (a routine setting
    /// changed), the token from before gets the one new episode, not the whole podcast again.
    @Test func aRestartWithAChangedSettingCostsNoResync() async throws {
        try await offPool {
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("feedproxy-release-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: data) }
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true", "DATA_DIR": data])
            let a = 1_590_000_071
            let first = try h.get("/podcasts/\(a)/episodes?limit=50")
            #expect(first.status == 200 && Self.items(first).count == 12, "\(first.text.prefix(500))")
            let token = try #require(Self.field(first, "syncToken") as? String)
            h.proxy.stop()
            #expect(h.upstream.publish(podcast: a, at: Int(Date().timeIntervalSince1970)))

            func afterRestart(dataDir: String) throws -> RawClient.Response {
                let p = try FeedProxyProcess(environment: Self.environment(h, ["DATA_DIR": dataDir, "FEED_MAX_BODY_BYTES": "20000000"]))
                defer { p.stop() }
                return try RawClient.get(port: p.port, "/podcasts/\(a)/episodes?limit=50&sync=\(token)", timeout: 10)
            }
            let kept = try afterRestart(dataDir: data)
            #expect(kept.status == 200, "\(kept.text.prefix(500))")
            #expect(Self.items(kept).count == 1, "only the new episode: \(kept.text.prefix(800))")
            #expect(Self.field(kept, "resync") as? Bool == false, "\(kept.text.prefix(300))")
            // Without the records (what they are for): the history starts again and the app resyncs.
            let forgotten = try afterRestart(dataDir: data + "-empty")
            defer { try? FileManager.default.removeItem(atPath: data + "-empty") }
            #expect(Self.field(forgotten, "resync") as? Bool == true && Self.items(forgotten).count == 13, "\(forgotten.text.prefix(300))")
        }
    }

    /// Two releases side by side on one Redis (a rolling deploy: their cache keys differ): a
    /// token from the old one is continued by the new one, and the old one, pinged after, stays
    /// on the same history (the new one's token asks it for nothing).
    @Test func twoReleasesSideBySideShareOneHistory() async throws {
        try await offPool {
            let redis = try RedisServerProcess()
            let shared = ["REDIS_URL": redis.url, "REDIS_TIMEOUT_MS": "2000", "ALLOW_PRIVATE_FEED_HOSTS": "true"]
            let old = try Harness(environment: shared)
            let a = 1_590_000_072
            let first = try old.get("/podcasts/\(a)/episodes?limit=50")
            #expect(first.status == 200 && Self.items(first).count == 12, "\(first.text.prefix(500))")
            let token = try #require(Self.field(first, "syncToken") as? String)
            #expect(old.upstream.publish(podcast: a, at: Int(Date().timeIntervalSince1970)))

            // The new release: another fingerprint (a setting that shapes cached answers), so none of the old one's entries.
            let new = try FeedProxyProcess(environment: Self.environment(old, shared.merging(["FEED_MAX_BODY_BYTES": "20000000"]) { $1 }))
            defer { new.stop() }
            // (The old replica's history was written right after its refresh, before this one started.)
            let fromNew = try RawClient.get(port: new.port, "/podcasts/\(a)/episodes?limit=50&sync=\(token)", timeout: 10)
            let answer = fromNew
            #expect(Self.items(answer).count == 1, "only the new episode: \(answer.text.prefix(800))")
            #expect(Self.field(answer, "resync") as? Bool == false, "\(answer.text.prefix(300))")
            let next = try #require(Self.field(answer, "syncToken") as? String)

            // The old release reads the feed again (a ping): it continues the recorded history
            // (the new release's version), so the new token asks it for nothing.
            #expect(try old.get("/hub/notify?id=\(a)").status == 202)
            #expect(waitUntil { (try? old.get("/podcasts/\(a)/episodes?limit=50")).map { Self.items($0).count } == 13 })
            let fromOld = try old.get("/podcasts/\(a)/episodes?limit=50&sync=\(next)")
            #expect(fromOld.status == 200 && Self.items(fromOld).isEmpty, "\(fromOld.text.prefix(500))")
            #expect(Self.field(fromOld, "resync") as? Bool == false, "\(fromOld.text.prefix(300))")
        }
    }
}
