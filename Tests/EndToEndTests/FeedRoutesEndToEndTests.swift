import FixtureUpstream
import Foundation
import HTTPServer
import Service
import Testing
import TestSupport

/// The real binary against a loopback fixture upstream: every route, every error.
@Suite(.serialized, .offPool) struct FeedRoutesEndToEndTests {
    /// The fixture upstream runs inside `feedproxy --fixtures`: a negative limit or offset must not trap.
    @Test func fixtureUpstreamTakesNegativeLimitsAndOffsets() async throws {
        try await offPool {
            let fx = try FixtureUpstream(directory: FeedProxyProcess.repositoryRoot.appendingPathComponent("Fixtures").path)
            defer { fx.stop() }
            let port = Int(fx.baseURL.split(separator: ":").last ?? "") ?? 0
            let search = try RawClient.get(port: port, "/search?term=swift&limit=-1")
            #expect(search.status == 200 && search.text.contains("\"resultCount\":0"))
            let body = "{\"variables\":{\"limit\":-5,\"offset\":-3}}"
            let c = try RawClient(port: port)
            try c.send("POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            let loans = try c.readResponse()
            #expect(loans.status == 200 && loans.text.contains("\"values\":[]"))
        }
    }

    /// `--fixtures` and the tests point every declared upstream endpoint at the fixture
    /// upstream: each must be answered there (405 for GraphQL's POST-only path), not 404.
    @Test func theFixtureUpstreamAnswersEveryDeclaredEndpoint() async throws {
        try await offPool {
            let fx = try FixtureUpstream(directory: FeedProxyProcess.repositoryRoot.appendingPathComponent("Fixtures").path)
            defer { fx.stop() }
            let port = Int(fx.baseURL.split(separator: ":").last ?? "") ?? 0
            #expect(!UpstreamCatalog.fixturePaths.isEmpty)
            for path in UpstreamCatalog.fixturePaths {
                #expect(try RawClient.get(port: port, path).status != 404, "the fixture upstream does not serve \(path)")
            }
        }
    }

    /// Every upstream's route, asked as its API description's examples ask it (the GETs whose
    /// answer names its source), answers items from the fixture upstream: an answer the
    /// adapter decodes into nothing (a recorded file served at the wrong path, an empty one,
    /// a decoder that drops every item) fails here, not only in production.
    @Test func everyUpstreamRouteAnswersItemsFromTheFixtureUpstream() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let document = try #require(try JSONSerialization.jsonObject(with: Data(try h.get("/openapi.json").body)) as? [String: Any])
            let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]] ?? [:]
            let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
            var sources = Set<String>()
            for (path, item) in paths.sorted(by: { $0.key < $1.key }) {
                guard let get = item["get"],
                    let answer = ((get["responses"] as? [String: Any])?["200"] as? [String: Any])?["content"] as? [String: [String: Any]],
                    let ref = (answer["application/json"]?["schema"] as? [String: Any])?["$ref"] as? String,
                    let source = ((schemas[String(ref.split(separator: "/").last ?? "")]?["properties"] as? [String: Any])?["source"] as? [String: Any])?[
                        "const"]
                        as? String
                else { continue }
                var target = path
                var query: [String] = []
                for parameter in get["parameters"] as? [[String: Any]] ?? [] {
                    let name = parameter["name"] as? String ?? ""
                    let example = (parameter["example"] ?? (parameter["schema"] as? [String: Any])?["example"]).map { "\($0)" }
                    switch parameter["in"] as? String {
                    case "path": target = target.replacingOccurrences(of: "{\(name)}", with: example ?? "")
                    case "query" where parameter["required"] as? Bool == true:
                        query.append("\(name)=\(example?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
                    default: break
                    }
                }
                if !query.isEmpty { target += "?" + query.joined(separator: "&") }
                let r = try h.get(target, timeout: 30)
                guard r.status == 200 else {
                    Issue.record("\(target) answered \(r.status): \(r.text.prefix(200))")
                    continue
                }
                let json = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any] ?? [:]
                let items = (json["count"] as? Int ?? 0) > 0 || !(json["items"] as? [Any] ?? []).isEmpty || json["item"] is [String: Any]
                #expect(items, "\(target) (\(source)) answered no item: \(r.text.prefix(200))")
                sources.insert(source)
            }
            #expect(sources.count >= 4, "sources asked: \(sources.sorted())")
        }
    }

    /// One feed, one fetch: Flickr sends the same photos whatever the limit, so every limit's
    /// answer is cut from one download (each then cached under its own key).
    @Test func everyPhotoLimitIsCutFromOneFetch() async throws {
        try await offPool {
            let h = try Harness()
            let counts = try [3, 20, 7].map { limit -> Int in
                let r = try h.get("/photos?tags=sunset&limit=\(limit)")
                #expect(r.status == 200)
                return h.json(r)["count"] as? Int ?? -1
            }
            #expect(counts == [3, 20, 7])
            #expect(h.upstream.requestCount(for: "flickr") == 1)
            let again = try h.get("/photos?tags=sunset&limit=7")
            #expect(again.header("X-Cache") == "HIT")
            #expect(h.upstream.requestCount(for: "flickr") == 1)
        }
    }

    @Test func photosEnvelopeAndItem() async throws {
        try await offPool {
            let h = try Harness()
            let r = try h.get("/photos?tags=sunset&limit=3")
            #expect(r.status == 200)
            #expect(r.header("Content-Type") == "application/json; charset=utf-8")
            #expect(r.header("X-Cache") == "MISS")
            let body = h.json(r)
            #expect(body["source"] as? String == "flickr")
            #expect(body["title"] as? String == "Uploads from everyone")
            #expect(body["updated"] as? String == "2025-11-03T14:20:05Z")
            #expect(body["count"] as? Int == 3)
            #expect(body["page"] is NSNull)
            let first = (body["items"] as? [[String: Any]])?.first ?? [:]
            #expect(first["id"] as? String == "53301234567")
            #expect(first["author"] as? String == "Jane Doe")
            #expect(first["taken"] as? String == "2025-11-03T14:12:33Z")
            #expect(first["largeImageUrl"] as? String == "https://live.staticflickr.com/65535/53301234567_a1b2c3d4e5_b.jpg")
            #expect(first["tags"] as? [String] == ["sunset", "goldengate", "sanfrancisco"])
        }
    }

    @Test func podcastsFilteredByTermWithNulls() async throws {
        try await offPool {
            let h = try Harness()
            let r = try h.get("/podcasts?term=swift&limit=10")
            #expect(r.status == 200)
            let body = h.json(r)
            #expect(body["source"] as? String == "itunes")
            let items = body["items"] as? [[String: Any]] ?? []
            #expect(items.map { $0["id"] as? Int } == [1200361736, 1526489823, 1603012345, 1437212345])
            #expect(items[2]["feedUrl"] is NSNull)
            #expect(items[2]["artworkUrl"] is NSNull)
            #expect(items[2]["explicit"] as? Bool == true)
            let other = h.json(try h.get("/podcasts?term=history"))
            #expect((other["items"] as? [[String: Any]])?.first?["title"] as? String == "Hardcore History")
        }
    }

    @Test func loansOverGraphQLAndREST() async throws {
        try await offPool {
            let h = try Harness()
            let body = h.json(try h.get("/loans?page=2&limit=5"))
            #expect(body["source"] as? String == "kiva")
            #expect(body["count"] as? Int == 5)
            let page = body["page"] as? [String: Any]
            #expect(page?["number"] as? Int == 2)
            #expect(page?["size"] as? Int == 5)
            #expect(page?["total"] as? Int == 4823)
            #expect(page?["pages"] as? Int == 965)
            let first = (body["items"] as? [[String: Any]])?.first ?? [:]
            #expect(first["id"] as? Int == 2812305)  // offset 5
            #expect(first["amount"] as? Double == 1000)

            let rest = try Harness(kivaREST: true)
            let restBody = rest.json(try rest.get("/loans"))
            #expect((restBody["page"] as? [String: Any])?["total"] as? Int == 5623)
            #expect((restBody["items"] as? [[String: Any]])?.first?["imageUrl"] as? String == "https://www.kiva.org/img/w800/5123400.jpg")
            #expect(rest.upstream.requestCount(for: "kiva-rest") == 1)
        }
    }

    @Test func clientErrors() async throws {
        try await offPool {
            let h = try Harness()
            let missing = try h.get("/podcasts")
            #expect(missing.status == 400)
            #expect(missing.text == "{\"error\":{\"status\":400,\"code\":\"missing_parameter\",\"message\":\"term is required\"}}")
            let badLimit = try h.get("/podcasts?term=swift&limit=500")
            #expect(badLimit.text == "{\"error\":{\"status\":400,\"code\":\"invalid_parameter\",\"message\":\"limit must be an integer between 1 and 200\"}}")
            #expect(try h.get("/photos?limit=0").status == 400)
            #expect(try h.get("/loans?page=-1").status == 400)
            #expect(try h.get("/photos?unknown=1").status == 200)
            #expect(try h.get("/nope").status == 404)
            #expect(try h.get("/photos?tags=%zz").status == 400)
            let c = try RawClient(port: h.port)
            try c.send("POST /photos HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            let post = try c.readResponse()
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET, HEAD, OPTIONS")
            #expect(h.upstream.requestCount == 1)  // only the valid /photos went upstream
        }
    }

    @Test func upstreamFailuresMapTo502And504() async throws {
        try await offPool {
            let h = try Harness(environment: ["UPSTREAM_TIMEOUT_MS": "600", "BREAKER_THRESHOLD": "100"])
            h.upstream.setMode(.fail)
            let failed = try h.get("/photos")
            #expect(failed.status == 502)
            #expect(failed.text.contains("\"code\":\"upstream_http_error\""))
            #expect(failed.text.contains("flickr"))
            // The log writer flushes on its own thread: the line comes, in its time.
            #expect(
                waitUntil {
                    h.proxy.logLines.contains { $0.contains("\"level\":\"warn\",\"msg\":\"upstream failed\"") && $0.contains("\"source\":\"flickr\"") }
                })
            h.upstream.setMode(.garbage)
            let garbage = try h.get("/loans")
            #expect(garbage.status == 502)
            #expect(garbage.text.contains("\"code\":\"bad_upstream_response\""))
            // The upstream answers after 3 s: a 504 is the 600 ms timeout, not its late answer.
            h.upstream.setMode(.slow)
            let slow = try h.get("/podcasts?term=swift")
            #expect(slow.status == 504)
            #expect(slow.text.contains("\"code\":\"upstream_timeout\""))
        }
    }

    @Test func twoHundredConcurrentColdRequestsMakeOneUpstreamFetch() async throws {
        try await offPool {
            let h = try Harness()
            h.upstream.setMode(.slow)  // hold the first fetch open while the rest arrive
            // Open 200 connections and send every request before reading any answer.
            let clients = try (0..<200).map { _ in try RawClient(port: h.port, timeout: 10) }
            for c in clients { try c.send("GET /podcasts?term=swift HTTP/1.1\r\nHost: x\r\n\r\n") }
            let all = clients.map { (try? $0.readResponse().status) ?? -1 }
            #expect(all.count == 200)
            #expect(all.allSatisfy { $0 == 200 })
            #expect(h.upstream.requestCount(for: "itunes") == 1)
        }
    }

    @Test func staleIfErrorKeepsServingAfterUpstreamBreaks() async throws {
        try await offPool {
            let h = try Harness(environment: ["CACHE_TTL_PHOTOS": "1", "CACHE_SWR_FACTOR": "0"])
            #expect(try h.get("/photos").header("X-Cache") == "MISS")
            h.upstream.setMode(.fail)
            usleep(1_200_000)
            for _ in 0..<3 {
                let r = try h.get("/photos")
                #expect(r.status == 200)
                #expect(r.header("X-Cache") == "STALE")
                #expect(h.json(r)["source"] as? String == "flickr")
            }
        }
    }

    @Test func staleWhileRevalidateServesAtOnceAndRefreshesOnce() async throws {
        try await offPool {
            let h = try Harness(environment: ["CACHE_TTL_LOANS": "1"])
            _ = try h.get("/loans")
            usleep(1_200_000)
            // STALE, not a MISS that waited for the slow upstream's answer.
            h.upstream.setMode(.slow)
            for _ in 0..<5 { #expect(try h.get("/loans").header("X-Cache") == "STALE") }
            // The refresh runs in the background and may reach the upstream after the five answers:
            // wait for it, then long enough that a second one would have started too.
            let deadline = Date().addingTimeInterval(2)
            while h.upstream.requestCount(for: "kiva") < 2 && Date() < deadline { usleep(10_000) }
            usleep(200_000)
            #expect(h.upstream.requestCount(for: "kiva") == 2)  // first fill + exactly one refresh
        }
    }

    @Test func cacheHitsEquivalentKeysETagAnd304() async throws {
        try await offPool {
            let h = try Harness()
            let first = try h.get("/podcasts?term=Swift&limit=50")
            #expect(first.header("X-Cache") == "MISS")
            let second = try h.get("/podcasts?limit=50&term=swift")
            #expect(second.header("X-Cache") == "HIT")
            #expect(second.body == first.body)
            #expect(h.upstream.requestCount(for: "itunes") == 1)
            let etag = try #require(second.header("ETag"))
            #expect(second.header("Cache-Control")?.hasPrefix("public, max-age=") == true)
            #expect(second.header("Cache-Control")?.hasSuffix("stale-while-revalidate=36000, stale-if-error=86400") == true)
            #expect(second.header("Age") != nil)
            let notModified = try h.get("/podcasts?term=swift", headers: ["If-None-Match: \(etag)"])
            #expect(notModified.status == 304)
            #expect(notModified.body.isEmpty)
            #expect(notModified.header("ETag") == etag)
            #expect(try h.get("/podcasts?term=swift", headers: ["If-None-Match: \"other\""]).status == 200)
        }
    }

    @Test func gzipVariantOnHitsAndNoCacheRevalidates() async throws {
        try await offPool {
            let h = try Harness()
            _ = try h.get("/photos")
            let z = try h.get("/photos", headers: ["Accept-Encoding: gzip"])
            #expect(z.header("Content-Encoding") == "gzip")
            #expect(z.header("Vary") == "Accept-Encoding")
            #expect(z.header("X-Cache") == "HIT")
            let plain = try h.get("/photos")
            #expect(Gzip.decompress(z.body) == plain.body)
            #expect(z.header("ETag") != plain.header("ETag"))
            let forced = try h.get("/photos", headers: ["Cache-Control: no-cache"])
            #expect(forced.header("X-Cache") == "MISS")
            #expect(h.upstream.requestCount(for: "flickr") == 2)
        }
    }

    @Test func ownRateLimitGives503WithRetryAfterOrStale() async throws {
        try await offPool {
            let h = try Harness(environment: ["RATE_LIMIT_ITUNES_PER_MIN": "1", "CACHE_TTL_PODCASTS": "1", "CACHE_SWR_FACTOR": "0"])
            #expect(try h.get("/podcasts?term=swift").status == 200)
            let limited = try h.get("/podcasts?term=history")
            #expect(limited.status == 503)
            #expect(limited.text.contains("\"code\":\"upstream_rate_limited\""))
            #expect(Int(limited.header("Retry-After") ?? "") ?? 0 >= 1)
            // With a previous answer cached, the client gets that instead of the 503.
            usleep(1_100_000)
            let stale = try h.get("/podcasts?term=swift")
            #expect(stale.status == 200)
            #expect(stale.header("X-Cache") == "STALE")
            #expect(h.upstream.requestCount(for: "itunes") == 1)
        }
    }

    @Test func openCircuitFailsFastWith503() async throws {
        try await offPool {
            let h = try Harness(environment: ["BREAKER_THRESHOLD": "2", "BREAKER_COOLDOWN_S": "30"])
            h.upstream.setMode(.fail)
            _ = try h.get("/loans?page=1")
            _ = try h.get("/loans?page=2")
            let before = h.upstream.requestCount(for: "kiva")
            let open = try h.get("/loans?page=3")
            #expect(open.status == 503)
            #expect(open.text.contains("\"code\":\"upstream_unavailable\""))
            #expect(open.header("Retry-After") != nil)
            #expect(h.upstream.requestCount(for: "kiva") == before)
            #expect(try h.get("/metrics").text.contains("feedproxy_circuit_breaker_state{host=\"127.0.0.1\"} 2"))
        }
    }

    @Test func headAndPreflightOnFeedRoutes() async throws {
        try await offPool {
            let h = try Harness()
            _ = try h.get("/photos")
            let c = try RawClient(port: h.port)
            try c.send("HEAD /photos HTTP/1.1\r\nHost: x\r\n\r\n")
            let head = try c.readResponse(head: true)
            #expect(head.status == 200)
            #expect(head.header("X-Cache") == "HIT")
            #expect(Int(head.header("Content-Length") ?? "") ?? 0 > 1000)
            #expect(head.body.isEmpty)
            try c.send("OPTIONS /podcasts HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: GET\r\n\r\n")
            let preflight = try c.readResponse()
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS")
        }
    }
}
