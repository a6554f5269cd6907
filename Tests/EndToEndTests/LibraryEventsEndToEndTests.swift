import Foundation
import Testing
import TestSupport

/// Issue 58: a library's new episodes as Server-Sent Events, a publisher's ping heard,
/// resuming from the last event's id; through the real binary and the fixture upstream.
@Suite(.serialized, .offPool) struct LibraryEventsEndToEndTests {
    /// An open event stream, read event by event.
    final class EventStream {
        let client: RawClient
        let head: RawClient.Response
        private var pending: [UInt8] = []

        convenience init(_ h: Harness, _ query: String, headers: [String] = [], timeout: Double = 30) throws {
            try self.init(port: h.port, query, headers: headers, timeout: timeout)
        }

        init(port: Int, _ query: String, headers: [String] = [], timeout: Double = 30, source: String? = nil) throws {
            client = try RawClient(port: port, timeout: timeout, source: source)
            let extra = headers.map { $0 + "\r\n" }.joined()
            try client.send("GET /episodes/events?\(query) HTTP/1.1\r\nHost: localhost\r\n\(extra)\r\n")
            head = try client.readResponse()
        }

        /// A stream opened by a POST of its parameters as a form (a library too big for a URL).
        init(port: Int, form: String, timeout: Double = 30) throws {
            client = try RawClient(port: port, timeout: timeout)
            try client.send(
                "POST /episodes/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: \(form.utf8.count)\r\n\r\n\(form)")
            head = try client.readResponse()
        }

        /// The next event (its fields; comments and `retry:` skipped). Heartbeats keep a stream
        /// alive for ever: an event that does not come within `within` seconds is a failure.
        func next(within: Double = 60) throws -> [String: String] {
            let giveUp = Date().addingTimeInterval(within)
            while true {
                guard Date() < giveUp else { throw RawClient.ClientError.timeout }
                while let end = Self.blankLine(in: pending) {
                    let text = String(decoding: pending[0..<end], as: UTF8.self)
                    pending.removeFirst(end + 2)
                    var fields: [String: String] = [:]
                    for line in text.split(separator: "\n") where !line.hasPrefix(":") {
                        guard let colon = line.firstIndex(of: ":") else { continue }
                        let value = line[line.index(after: colon)...].drop { $0 == " " }
                        fields[String(line[..<colon]), default: ""] += value
                    }
                    if fields["event"] != nil { return fields }
                }
                let chunk = try client.readChunk()
                if chunk.isEmpty { throw RawClient.ClientError.closed }
                pending += chunk
            }
        }

        /// The next `episodes` event's JSON and id.
        func episodes() throws -> (json: [String: Any], id: String) {
            let event = try next()
            let json = (try? JSONSerialization.jsonObject(with: Data((event["data"] ?? "").utf8))) as? [String: Any] ?? [:]
            return (json, event["id"] ?? "")
        }

        static func blankLine(in bytes: [UInt8]) -> Int? {
            guard bytes.count >= 2 else { return nil }
            for i in 0..<(bytes.count - 1) where bytes[i] == 10 && bytes[i + 1] == 10 { return i }
            return nil
        }
    }

    static func items(_ json: [String: Any]) -> [[String: Any]] { json["items"] as? [[String: Any]] ?? [] }

    /// A stream starts with the newest episodes and their token; a publisher's ping brings
    /// the new episode to it, and only that; reconnecting from an id misses nothing and repeats
    /// nothing; an id not ours starts afresh and says so (resync).
    @Test func aPingedEpisodeReachesTheStreamAndAReconnectResumes() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let library = "podcasts=1590000011,1590000012&limit=50"
            let stream = try EventStream(h, library)
            #expect(stream.head.status == 200)
            #expect(stream.head.header("Content-Type")?.hasPrefix("text/event-stream") == true)
            #expect(stream.head.header("Transfer-Encoding") == "chunked")
            #expect(stream.head.header("Content-Length") == nil)
            let first = try stream.episodes()
            let statuses = (first.json["podcasts"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String }
            #expect(statuses == ["ok", "ok"], "\(first.json)")
            #expect(!Self.items(first.json).isEmpty && !first.id.isEmpty && first.id == first.json["syncToken"] as? String)
            let downloads = h.upstream.requestCount(for: "rss")

            #expect(h.upstream.publish(podcast: 1_590_000_011, at: Int(Date().timeIntervalSince1970)))
            let ping = try h.get("/hub/notify?id=1590000011")
            #expect(ping.status == 202, "\(ping.text)")
            let second = try stream.episodes()
            let fresh = Self.items(second.json)
            #expect(fresh.count == 1 && fresh.first?["podcastId"] as? Int == 1_590_000_011, "\(second.json)")
            #expect(second.id != first.id)
            #expect(h.upstream.requestCount(for: "rss") == downloads + 1, "the ping read the feed once")
            let again = try h.get("/hub/notify?id=1590000011")
            #expect(again.status == 429 && again.header("Retry-After") != nil, "a ping flood reads nothing more")

            // Gone after the first event: back with its id, the new episode and only it.
            let resumed = try EventStream(h, library, headers: ["Last-Event-ID: \(first.id)"])
            let caughtUp = try resumed.episodes()
            #expect(Self.items(caughtUp.json).map { $0["id"] as? String } == fresh.map { $0["id"] as? String })
            #expect(caughtUp.id == second.id)
            let current = try EventStream(h, library, headers: ["Last-Event-ID: \(second.id)"])
            #expect(Self.items(try current.episodes().json).isEmpty, "nothing twice")
            let forged = try EventStream(h, library, headers: ["Last-Event-ID: not-a-token-of-ours"])
            #expect(forged.head.status == 200)
            // Issue 67: an id not ours is no silent restart: each podcast is sent whole and says resync.
            let told = try forged.episodes().json
            let podcasts = told["podcasts"] as? [[String: Any]] ?? []
            #expect(podcasts.count == 2 && podcasts.allSatisfy { $0["resync"] as? Bool == true }, "\(podcasts)")
            #expect(Self.items(told).count >= Self.items(first.json).count + 1, "an id not ours starts afresh")

            let metrics = try h.get("/metrics").text
            #expect(metrics.contains("feedproxy_event_streams 4"), "\(metrics.split(separator: "\n").filter { $0.contains("event") })")
        }
    }

    /// Without a ping, a new episode reaches the stream within the feed's refresh interval: the
    /// watched feed is read again at its cadence (here 1–2 s), conditionally (a 304 while
    /// nothing changed), and its new episode is the next event, alone.
    @Test func withoutAPingANewEpisodeArrivesWithinTheRefreshInterval() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true", "WATCH_REFRESH_MIN_S": "1", "WATCH_REFRESH_MAX_S": "2"])
            let stream = try EventStream(h, "podcasts=1590000031&limit=50")
            let first = try stream.episodes()
            #expect((first.json["podcasts"] as? [[String: Any]])?.first?["status"] as? String == "ok", "\(first.json)")
            #expect(waitUntil(30) { h.upstream.notModifiedCount >= 1 }, "read again at its cadence, conditionally")
            #expect(h.upstream.publish(podcast: 1_590_000_031, at: Int(Date().timeIntervalSince1970)))
            let second = try stream.episodes()
            let fresh = Self.items(second.json)
            #expect(fresh.count == 1 && fresh.first?["podcastId"] as? Int == 1_590_000_031, "\(second.json)")
            #expect(second.id != first.id)
        }
    }

    /// Replicas A and B sharing a real Redis: podcast `id` read by A (its copy in Redis), and a
    /// stream on B watching it, its first event read.
    struct TwoReplicas {
        let redis: RedisServerProcess
        let a: Harness
        let b: FeedProxyProcess
        let stream: EventStream
        let first: (json: [String: Any], id: String)
    }

    /// Replica A (in this process, with the fixture upstream) and replica B sharing a Redis.
    static func replicaPair() throws -> (redis: RedisServerProcess, a: Harness, b: FeedProxyProcess) {
        let redis = try RedisServerProcess()
        let shared = ["REDIS_URL": redis.url, "REDIS_TIMEOUT_MS": "2000", "ALLOW_PRIVATE_FEED_HOSTS": "true"]
        let a = try Harness(environment: shared)
        let b = try FeedProxyProcess(
            environment: Harness.upstreamEnvironment(a.upstream).merging(shared.merging(["CLIENT_MISS_RATE_PER_MIN": "0"]) { $1 }) { $1 })
        return (redis, a, b)
    }

    /// Podcast `id` read by A and held by B from the shared tier, then a new episode published:
    /// the token B gave for its copy.
    static func heldOnB(_ id: Int, _ a: Harness, _ b: FeedProxyProcess) throws -> String {
        let stored = a.sharedStores
        #expect(try a.get("/podcasts/\(id)/episodes?limit=50").status == 200)
        #expect(waitUntil { a.sharedStores > stored })
        let held = try RawClient.get(port: b.port, "/podcasts/\(id)/episodes?limit=50")
        let token = try #require(a.json(held)["syncToken"] as? String)
        #expect(a.upstream.publish(podcast: id, at: Int(Date().timeIntervalSince1970)))
        return token
    }

    static func twoReplicas(streamOnBFor id: Int) throws -> TwoReplicas {
        let (redis, a, b) = try replicaPair()
        #expect(try a.get("/podcasts/\(id)/episodes?limit=1").status == 200)
        #expect(waitUntil { a.sharedStores >= 1 })
        let stream = try EventStream(port: b.port, "podcasts=\(id)&limit=50")
        let first = try stream.episodes()
        #expect((first.json["podcasts"] as? [[String: Any]])?.first?["status"] as? String == "ok", "\(first.json)")
        return TwoReplicas(redis: redis, a: a, b: b, stream: stream, first: first)
    }

    /// A ping taken by one replica reaches the streams of another (Redis carries the word,
    /// the shared tier the episodes): the feed is read once, by the replica pinged.
    @Test func aPingOnOneReplicaReachesStreamsOnAnother() async throws {
        try await offPool {
            let replicas = try Self.twoReplicas(streamOnBFor: 1590000041)
            defer { _ = replicas.b.stop() }
            let (redis, a, b, stream, first) = (replicas.redis, replicas.a, replicas.b, replicas.stream, replicas.first)
            #expect(a.upstream.requestCount(for: "rss") == 1, "replica B took replica A's copy")

            #expect(a.upstream.publish(podcast: 1_590_000_041, at: Int(Date().timeIntervalSince1970)))
            #expect(try a.get("/hub/notify?id=1590000041").status == 202)
            let second = try stream.episodes()
            #expect(Self.items(second.json).count == 1 && second.id != first.id, "\(second.json)")
            #expect(a.upstream.requestCount(for: "rss") == 2, "read once, by the replica pinged")

            // Redis gone: the replica says so in /readyz (still ready), and its streams still hear its own reads.
            #expect(try RawClient.get(port: b.port, "/readyz").text == #"{"status":"ready"}"#)
            redis.kill9()
            #expect(waitUntil(20) { (try? RawClient.get(port: b.port, "/readyz"))?.text.contains(#""redis":"down""#) == true })
            #expect(try RawClient.get(port: b.port, "/readyz").status == 200)
            #expect(a.upstream.publish(podcast: 1_590_000_041, at: Int(Date().timeIntervalSince1970) + 1))
            #expect(try RawClient.get(port: b.port, "/hub/notify?id=1590000041").status == 202)
            let third = try stream.episodes()
            #expect(Self.items(third.json).count == 1 && third.id != second.id, "\(third.json)")
        }
    }

    /// Issue 67: word lost with a Redis that comes back empty is caught up. Replica A reads a
    /// new episode while Redis is down (a ping to A: nothing to announce it on), then Redis
    /// restarts empty: B notices (the tier's epoch changed) and reads its watched feeds again,
    /// spread, so its stream gets the episode within seconds, not at its next turn (2 minutes
    /// and more).
    @Test func aStreamCatchesUpWhenRedisComesBackEmpty() async throws {
        try await offPool {
            let id = 1_590_000_045
            let replicas = try Self.twoReplicas(streamOnBFor: id)
            defer { _ = replicas.b.stop() }
            let (redis, a, b, stream, first) = (replicas.redis, replicas.a, replicas.b, replicas.stream, replicas.first)
            // B has looked at the tier's epoch once (every two seconds while it has streams).
            usleep(2_500_000)
            redis.kill9()
            #expect(waitUntil(20) { (try? a.get("/readyz"))?.text.contains(#""redis":"down""#) == true })
            #expect(a.upstream.publish(podcast: id, at: Int(Date().timeIntervalSince1970)))
            #expect(try a.get("/hub/notify?id=\(id)").status == 202)
            #expect(waitUntil { a.upstream.requestCount(for: "rss") == 2 }, "A read the feed, with no Redis to tell B")
            try redis.start()
            let caughtUp = try stream.episodes()
            #expect(Self.items(caughtUp.json).count == 1 && caughtUp.id != first.id, "\(caughtUp.json)")
            let metrics = try RawClient.get(port: b.port, "/metrics").text
            #expect(metrics.contains("feedproxy_shared_tier_emptied_total 1"), "\(metrics.split(separator: "\n").filter { $0.contains("emptied") })")
        }
    }

    /// A replica that holds a podcast no stream there watches takes another replica's newer
    /// copy when it is announced: an app that reconnects there later (its replica went away
    /// in a deploy) hears of what came meanwhile, not the stale copy's nothing until a read
    /// (the chaos test's rolling deploy lost two episodes so).
    @Test func aReplicaHoldingAnUnwatchedPodcastTakesTheNewerCopy() async throws {
        try await offPool {
            let replicas = try Self.twoReplicas(streamOnBFor: 1_590_000_046)
            defer { _ = replicas.b.stop() }
            let (a, b) = (replicas.a, replicas.b)
            let x = 1_590_000_047
            let token = try Self.heldOnB(x, a, b)
            #expect(try a.get("/hub/notify?id=\(x)").status == 202)
            #expect(
                waitUntil(10) {
                    let answer = try? RawClient.get(port: b.port, "/podcasts/\(x)/episodes?limit=50&sync=\(token)")
                    return answer.map { Self.items(a.json($0)).count } == 1
                }, "B still answers from its copy from before the ping")
        }
    }

    /// A replica with no stream yet hears what the others announced since it started: it holds
    /// a podcast (an app's request read it), another replica reads a new episode, then an app
    /// reconnects here (its replica went away in a deploy) from its token. Before, the first
    /// stream took the change feed's position of that moment, skipped the announcement and the
    /// app heard nothing until this replica's next read, minutes on (the chaos test's rolling
    /// deploy lost two episodes so).
    @Test func aReplicaWithoutStreamsHearsWhatWasAnnouncedSinceItStarted() async throws {
        try await offPool {
            let pair = try Self.replicaPair()
            defer { _ = pair.b.stop() }  // the pair, its Redis with it, lives to the end
            let (a, b) = (pair.a, pair.b)
            let x = 1_590_000_048
            let token = try Self.heldOnB(x, a, b)
            // Read on A for sure (a ping is taken by whichever replica comes first).
            #expect(try a.get("/episodes?podcasts=\(x)&limit=5", headers: ["Cache-Control: no-cache"]).status == 200)
            #expect(waitUntil { a.sharedStores >= 2 }, "A read the new episode and stored it")
            let stream = try EventStream(port: b.port, "podcasts=\(x)&limit=50&sync=\(token)")
            var heard = Self.items(try stream.episodes().json)
            if heard.isEmpty { heard = Self.items(try stream.episodes().json) }
            #expect(heard.count == 1, "\(heard)")
            #expect(a.upstream.requestCount(for: "rss") == 2, "B took A's copy")
        }
    }

    /// Issue 67: a publisher pings by URL (as pubnotify and podping do) a replica that never
    /// read the feed of a directory podcast: its record (kept in Redis by the replica that read
    /// it) names the podcast, the ping is a 202, and the stream on the other replica hears of
    /// the new episode. Before, only feed ids and feeds a stream there watched were found (404).
    @Test func aPingByURLFindsADirectoryPodcastReadOnAnotherReplica() async throws {
        try await offPool {
            let replicas = try Self.twoReplicas(streamOnBFor: 1590000044)
            defer { _ = replicas.b.stop() }
            let (a, b, stream, first) = (replicas.a, replicas.b, replicas.stream, replicas.first)
            // A third replica that has read nothing takes the ping.
            let c = try FeedProxyProcess(
                environment: Harness.upstreamEnvironment(a.upstream).merging([
                    "REDIS_URL": replicas.redis.url, "REDIS_TIMEOUT_MS": "2000", "ALLOW_PRIVATE_FEED_HOSTS": "true", "CLIENT_MISS_RATE_PER_MIN": "0",
                ]) { $1 })
            defer { _ = c.stop() }
            _ = b
            #expect(a.upstream.publish(podcast: 1_590_000_044, at: Int(Date().timeIntervalSince1970)))
            let feed = "http://127.0.0.1:\(a.upstream.baseURL.split(separator: ":").last ?? "")/rss/library-1590000044.xml"
            let ping = try RawClient.get(port: c.port, "/hub/notify?url=" + (feed.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
            #expect(ping.status == 202, "\(ping.text)")
            #expect(ping.text.contains("1590000044"), "\(ping.text)")
            let second = try stream.episodes()
            #expect(Self.items(second.json).count == 1 && second.id != first.id, "\(second.json)")
        }
    }

    /// Any read that finds new episodes is word for every replica's streams, not only a ping's
    /// or the refresher's: an app's `/episodes` with `no-cache` on replica A reads the feed,
    /// and a stream on replica B hears of the new episode long before B's own cadence.
    @Test func aRequestsReadOnOneReplicaReachesStreamsOnAnother() async throws {
        try await offPool {
            let replicas = try Self.twoReplicas(streamOnBFor: 1590000042)
            defer { _ = replicas.b.stop() }
            let (a, stream, first) = (replicas.a, replicas.stream, replicas.first)

            #expect(a.upstream.publish(podcast: 1_590_000_042, at: Int(Date().timeIntervalSince1970)))
            let refreshed = try a.get("/episodes?podcasts=1590000042&limit=5", headers: ["Cache-Control: no-cache"])
            #expect(refreshed.status == 200)
            let second = try stream.episodes()
            #expect(Self.items(second.json).count == 1 && second.id != first.id, "\(second.json)")
            #expect(a.upstream.requestCount(for: "rss") == 2, "read once, by the request on A")
        }
    }

    /// A backlog of many pages reaches a stream whole, a page an event: a client resuming from
    /// an old position with `limit=1` gets each of ten new episodes, once.
    @Test func aLongBacklogArrivesPageByPage() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let before = try h.get("/episodes?podcasts=1590000032&limit=1")
            let token = try #require(h.json(before)["syncToken"] as? String)
            let now = Int(Date().timeIntervalSince1970)
            for i in 0..<10 { #expect(h.upstream.publish(podcast: 1_590_000_032, at: now - 100 + i)) }
            #expect(try h.get("/hub/notify?id=1590000032").status == 202)
            #expect(waitUntil { h.upstream.requestCount(for: "rss") == 2 })
            usleep(300_000)
            let stream = try EventStream(h, "podcasts=1590000032&limit=1&sync=\(token)")
            var seen: [String] = []
            for _ in 0..<10 {
                let event = try stream.episodes()
                seen += Self.items(event.json).compactMap { $0["id"] as? String }
            }
            #expect(seen.count == 10 && Set(seen).count == 10, "\(seen)")
        }
    }

    /// Issue 67: an idle stream costs nothing a turn. A stream opened without a position on a
    /// podcast longer than its `limit` gets the newest episodes, and then is not worked out
    /// again every turn of the ticker (five a second) while nothing changes; nor is one whose
    /// backlog has all left.
    @Test func anIdleStreamIsNotWorkedOutAgainEachTurn() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            func composed() throws -> Int {
                let line = try h.get("/metrics").text.split(separator: "\n").first { $0.hasPrefix("feedproxy_events_composed_total ") }
                return Int(line?.split(separator: " ").last ?? "") ?? -1
            }
            let stream = try EventStream(h, "podcasts=1590000033&limit=1")
            #expect(Self.items(try stream.episodes().json).count == 1)
            let before = try composed()
            #expect(before >= 1)
            // Ten turns of the ticker at least (200 ms each), a few more on a busy machine.
            usleep(2_000_000)
            let after = try composed()
            #expect(after <= before + 1, "worked out again while idle: \(after - before) times")
        }
    }

    /// A ping that names a known feed costs its sender a miss: one address pinging feed after
    /// feed runs out of its quota (and reads nothing more), another address still pings.
    @Test func pingsCostTheirSenderAMiss() async throws {
        try await offPool {
            // 18 a minute: three at once (a sixth of a minute's worth), then one each 3.3 s.
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true", "CLIENT_MISS_RATE_PER_MIN": "18"])
            func get(_ target: String, from source: String) throws -> RawClient.Response {
                let c = try RawClient(port: h.port, timeout: 10, source: source)
                try c.send("GET \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n")
                return try c.readResponse()
            }
            let ids = (1_590_000_051...1_590_000_055).map(String.init)
            #expect(try get("/episodes?podcasts=\(ids.joined(separator: ","))", from: "127.0.0.5").status == 200)
            let reads = h.upstream.requestCount(for: "rss")
            let answers = try ids.prefix(4).map { try get("/hub/notify?id=\($0)", from: "127.0.0.9") }
            #expect(answers.prefix(3).allSatisfy { $0.status == 202 }, "\(answers.map(\.status))")
            let flood = answers[3]
            #expect(flood.status == 429 && flood.header("Retry-After") != nil)
            #expect((h.json(flood)["error"] as? [String: Any])?["code"] as? String == "client_rate_limited")
            #expect(try get("/hub/notify?id=\(ids[4])", from: "127.0.0.7").status == 202, "another address")
            #expect(waitUntil { h.upstream.requestCount(for: "rss") == reads + 4 }, "four reads: three pings of one address, one of another")
        }
    }

    /// Pings name only what is known (nothing is fetched for a stranger's URL). An address is
    /// not a person: hundreds of streams from one address (a carrier NAT) are all taken while
    /// the replica holds less than half its streams; past that, that address gets no more but
    /// another still does; the streams cost bounded memory; one person leaving costs the others
    /// behind the same address nothing. A bad query is a JSON error, not a stream.
    @Test func pingsAndStreamsAreBounded() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true", "EVENT_STREAMS_MAX": "600", "EVENT_STREAMS_PER_CLIENT": "2"])
            let before = h.upstream.requestCount
            let unknown = try h.get("/hub/notify?url=https%3A%2F%2Fattacker.example%2Ffeed.xml")
            #expect(unknown.status == 404)
            #expect((h.json(unknown)["error"] as? [String: Any])?["code"] as? String == "feed_unknown")
            #expect(try h.get("/hub/notify").status == 400)
            #expect(h.upstream.requestCount == before, "nothing fetched")

            func rssKiB() -> Int {
                let status = (try? String(contentsOfFile: "/proc/\(h.proxy.process.processIdentifier)/status", encoding: .utf8)) ?? ""
                return status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
            }
            func open(from source: String) throws -> EventStream {
                try EventStream(port: h.port, "podcasts=1590000021", timeout: 30, source: source)
            }
            let first = try open(from: "127.0.0.9")
            _ = try first.episodes()
            let baseline = rssKiB()
            var nat = [first]
            for _ in 1..<300 { nat.append(try open(from: "127.0.0.9")) }
            #expect(nat.allSatisfy { $0.head.status == 200 }, "300 people behind one address, the replica half empty: all taken")
            let flood = try open(from: "127.0.0.9")
            #expect(flood.head.status == 429 && flood.head.header("Retry-After") != nil, "half full: that address gets no more")
            #expect((try? JSONSerialization.jsonObject(with: Data(flood.head.body)) as? [String: Any])?["error"] != nil)
            // Thousands more from that address: each refused at once, none held, nothing kept.
            var refused = 0
            for _ in 0..<2000 {
                let s = try open(from: "127.0.0.9")
                if s.head.status == 429 { refused += 1 }
                s.client.close()
            }
            #expect(refused == 2000)
            let other = try open(from: "127.0.0.7"), other2 = try open(from: "127.0.0.7")
            #expect(other.head.status == 200 && other2.head.status == 200, "another address still does")
            #expect(try open(from: "127.0.0.7").head.status == 429)
            let grown = rssKiB() - baseline
            #expect(grown < 300 * 64, "300 idle streams: \(grown) KiB")

            // Most of the NAT's people leave; the ones who stay still hear of new episodes.
            for s in nat[1..<290] { s.client.close() }
            #expect(h.upstream.publish(podcast: 1_590_000_021, at: Int(Date().timeIntervalSince1970)))
            #expect(try h.get("/hub/notify?id=1590000021").status == 202)
            #expect(Self.items(try nat[295].episodes().json).count > 1, "its first event: where it starts")
            let heard = try nat[295].episodes()
            #expect(Self.items(heard.json).count == 1, "\(heard.json)")
            #expect(Self.items(try first.episodes().json).count == 1)
            // The replica below half again: the address is taken again.
            var reopened: EventStream?
            for _ in 0..<100 where reopened == nil {
                let s = try open(from: "127.0.0.9")
                if s.head.status == 200 { reopened = s } else { usleep(50_000) }
            }
            #expect(reopened != nil)

            let bad = try h.get("/episodes/events?podcasts=abc")
            #expect(bad.status == 400 && bad.header("Content-Type")?.hasPrefix("application/json") == true)
            let tooMany = (1_590_000_001...1_590_000_501).map(String.init).joined(separator: ",")
            #expect(try h.get("/episodes/events?podcasts=\(tooMany)").status == 400)
        }
    }
}
