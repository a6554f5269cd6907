import Foundation
import Testing
import TestSupport

@Suite(.serialized, .offPool) struct OperationsEndToEndTests {
    @Test func healthAndReadinessDuringDrain() async throws {
        try await offPool {
            let h = try Harness(environment: ["SHUTDOWN_DELAY_S": "1.5"])
            #expect(try h.get("/healthz").text == "{\"status\":\"ok\"}")
            #expect(try h.get("/readyz").status == 200)
            kill(h.proxy.process.processIdentifier, SIGTERM)
            #expect(waitUntil { (try? h.get("/readyz").status) == 503 })
            let ready = try h.get("/readyz")
            #expect(ready.status == 503)
            #expect(ready.text == "{\"status\":\"draining\"}")
            #expect(try h.get("/healthz").status == 200)
            #expect(h.proxy.stop() == 0)
        }
    }

    /// Listeners share their port (SO_REUSEPORT), which would let a second server started on
    /// it by mistake take part of the connections unnoticed: it is refused, and the first
    /// keeps serving.
    @Test func aSecondServerOnTheSamePortIsRefused() async throws {
        try await offPool {
            let h = try Harness()
            let second = try Spawned(
                FeedProxyProcess.binaryPath, ["--port", "\(h.port)", "--fixtures", "Fixtures"], directory: FeedProxyProcess.repositoryRoot.path,
                capture: true)
            let deadline = Date().addingTimeInterval(15)
            while second.isRunning && Date() < deadline { usleep(20_000) }
            if second.isRunning { second.terminate() }
            second.waitUntilExit()
            let message = String(decoding: second.output().stderr, as: UTF8.self)
            #expect(second.terminationStatus == 1)
            #expect(message.contains(":\(h.port) is already in use"), "\(message)")
            #expect(try h.get("/healthz").status == 200)
        }
    }

    @Test func gracefulShutdownLetsInFlightRequestFinish() async throws {
        try await offPool {
            let h = try Harness()
            h.upstream.setMode(.slow)
            let c = try RawClient(port: h.port, timeout: 10)
            try c.send("GET /photos HTTP/1.1\r\nHost: x\r\n\r\n")
            usleep(300_000)
            kill(h.proxy.process.processIdentifier, SIGTERM)
            let r = try c.readResponse()
            #expect(r.status == 200)
            #expect(r.header("Connection") == "close")
            #expect(h.proxy.stop() == 0)
        }
    }

    @Test func metricsAfterKnownTraffic() async throws {
        try await offPool {
            let h = try Harness()
            _ = try h.get("/photos")
            _ = try h.get("/photos")
            _ = try h.get("/photos")
            _ = try h.get("/podcasts")
            _ = try h.get("/nope")
            let text = try h.get("/metrics").text
            #expect(text.contains("feedproxy_http_requests_total{route=\"/photos\",status=\"200\"} 3\n"))
            #expect(text.contains("feedproxy_http_requests_total{route=\"/podcasts\",status=\"400\"} 1\n"))
            #expect(text.contains("feedproxy_http_requests_total{route=\"(unmatched)\",status=\"404\"} 1\n"))
            #expect(text.contains("feedproxy_cache_requests_total{source=\"flickr\",result=\"hit\"} 2\n"))
            #expect(text.contains("feedproxy_cache_requests_total{source=\"flickr\",result=\"miss\"} 1\n"))
            #expect(text.contains("feedproxy_upstream_requests_total{source=\"flickr\",outcome=\"ok\"} 1\n"))
            #expect(text.contains("feedproxy_http_request_duration_seconds_count{route=\"/photos\"} 3\n"))
            #expect(text.contains("feedproxy_cache_entries 1\n"))
            #expect(text.contains("feedproxy_circuit_breaker_state{host=\"127.0.0.1\"} 0\n"))
            #expect(text.contains("# TYPE feedproxy_open_connections gauge\nfeedproxy_open_connections "))
        }
    }

    @Test func requestIDIsPropagatedAndLogged() async throws {
        try await offPool {
            let h = try Harness()
            let r = try h.get("/photos", headers: ["X-Request-ID: trace-42"])
            #expect(r.header("X-Request-ID") == "trace-42")
            let generated = try h.get("/healthz")
            let id = try #require(generated.header("X-Request-ID"))
            #expect(!id.isEmpty)
            usleep(200_000)
            let line = try #require(h.proxy.logLines.first { $0.contains("\"request_id\":\"trace-42\"") })
            let fields = (try JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
            #expect(fields["method"] as? String == "GET")
            #expect(fields["path"] as? String == "/photos")
            #expect(fields["status"] as? Int == 200)
            #expect(fields["cache"] as? String == "MISS")
            #expect(fields["upstream_ms"] is Int)
            #expect((fields["bytes"] as? Int ?? 0) > 1000)
            #expect(h.proxy.logLines.contains { $0.contains("\"request_id\":\"\(id)\"") })
        }
    }

    @Test(arguments: [
        (["--port", "70000"], "PORT must be an integer between 0 and 65535"),
        (["--cache-ttl-photos", "-5"], "CACHE_TTL_PHOTOS must be a non-negative number of seconds"),
        (["--flickr-feed-url", "not a url"], "FLICKR_FEED_URL must be an http(s) URL"),
        (["--log-level", "loud"], "LOG_LEVEL must be debug, info, warn or error"),
        (["--bogus"], "unknown option --bogus"),
        // Values that pass a naive check but make a derived figure absurd (issue 19).
        (["--client-miss-rate", "1e-310"], "CLIENT_MISS_RATE_PER_MIN must be a number of requests per minute from 0.01 to 1000000 (0: off)"),
        (["--rate-limit-itunes", "1e-310"], "RATE_LIMIT_ITUNES_PER_MIN must be a number of requests per minute from 0.01 to 1000000"),
        (["--cache-swr-factor", "1e300"], "CACHE_SWR_FACTOR must be a number from 0 to 1000"),
        (["--header-timeout", "1e300"], "HEADER_TIMEOUT_S must be a positive number of seconds up to 31536000"),
        (["--fixtures", "/nonexistent/fixtures"], "--fixtures: no recorded payloads (feedproxy-fixtures.txt) in /nonexistent/fixtures; pass"),
    ])
    func invalidConfigurationExitsWithMessage(_ args: [String], _ message: String) throws {
        let result = try FeedProxyProcess.run(args)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message))
    }

    @Test func invalidEnvironmentIsRejectedToo() async throws {
        try await offPool {
            let result = try FeedProxyProcess.run([], environment: ["UPSTREAM_TIMEOUT_MS": "soon"])
            #expect(result.status == 2)
            #expect(result.stderr.contains("UPSTREAM_TIMEOUT_MS must be an integer"))
        }
    }

    @Test func helpListsEveryOptionWithDefaults() async throws {
        try await offPool {
            let result = try FeedProxyProcess.run(["--help"])
            #expect(result.status == 0)
            for env in [
                "PORT", "HOST", "FLICKR_FEED_URL", "ITUNES_SEARCH_URL", "KIVA_GRAPHQL_URL", "KIVA_LOANS_URL", "CACHE_TTL_PHOTOS",
                "CACHE_TTL_PODCASTS", "CACHE_TTL_LOANS", "CACHE_MAX_BYTES", "UPSTREAM_CONNECT_TIMEOUT_MS", "UPSTREAM_TIMEOUT_MS", "LOG_LEVEL",
            ] {
                #expect(result.stdout.contains("(\(env))"), "missing \(env)")
            }
            #expect(result.stdout.contains("[default: 8080]"))
            #expect(result.stdout.contains("[default: https://gateway.production.kiva.org/graphql]"))
            #expect(result.stdout.contains("--fixtures [DIR]"))
        }
    }

    @Test func offlineFixturesModeServesEveryRoute() async throws {
        try await offPool {
            let p = try FeedProxyProcess(arguments: ["--fixtures", "Fixtures"])
            defer { p.stop() }
            #expect(try RawClient.get(port: p.port, "/photos").status == 200)
            #expect(try RawClient.get(port: p.port, "/podcasts?term=daily").text.contains("The Daily"))
            #expect(try RawClient.get(port: p.port, "/loans").status == 200)
        }
    }

    @Test func openAPIDocumentIsServed() async throws {
        try await offPool {
            let h = try Harness()
            let r = try h.get("/openapi.json")
            #expect(r.status == 200)
            let doc = h.json(r)
            #expect(doc["openapi"] as? String == "3.1.0")
            let paths = doc["paths"] as? [String: Any] ?? [:]
            for path in ["/photos", "/podcasts", "/loans", "/healthz", "/readyz", "/metrics"] { #expect(paths[path] != nil, "missing \(path)") }
        }
    }

    /// Every `--help` row `  --flag (ENV)  help [default: X]` is, word for word, the row
    /// `| `ENV` | `--flag` | `X` | help |` of docs/configuration.md (and of the README, which
    /// lists a newcomer's few): run scripts/generate/settings-reference.py after changing Options.swift.
    @Test func settingsReferenceMatchesHelpExactly() async throws {
        try await offPool {
            let help = try FeedProxyProcess.run(["--help"]).stdout
            let rows = Set(
                help.split(separator: "\n").compactMap { line -> String? in
                    let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
                    guard parts.count == 3, parts[0].hasPrefix("--"), parts[1].hasPrefix("("), parts[1].hasSuffix(")"),
                        let marker = parts[2].range(of: " [default: ", options: .backwards), parts[2].hasSuffix("]")
                    else { return nil }
                    let text = parts[2][..<marker.lowerBound].trimmingCharacters(in: .whitespaces)
                    let value = parts[2][marker.upperBound..<parts[2].index(before: parts[2].endIndex)]
                    return "| `\(parts[1].dropFirst().dropLast())` | `\(parts[0])` | `\(value)` | \(text) |"
                })
            #expect(rows.count >= 40)
            func table(_ path: String) throws -> Set<String> {
                let text = try String(contentsOf: FeedProxyProcess.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
                return Set(text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("| `") && $0.contains("` | `--") })
            }
            let reference = try table("docs/configuration.md")
            for row in rows.subtracting(reference) { Issue.record("docs/configuration.md lacks (or differs from) --help's row: \(row)") }
            for row in reference.subtracting(rows) { Issue.record("docs/configuration.md has a row --help does not: \(row)") }
            // Flags without a variable (--fixtures, --healthcheck, --help, --openapi) are rows of the same table (issue 69).
            let documentedRows = try String(contentsOf: FeedProxyProcess.repositoryRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
                .split(separator: "\n").filter { $0.hasPrefix("| — | `--") }
            let flagOnly = help.components(separatedBy: "Upstreams without a shared rate budget")[0].split(separator: "\n")
                .filter { $0.hasPrefix("  --") && !($0.split(separator: " ").dropFirst().first?.hasPrefix("(") ?? false) }
            #expect(flagOnly.count >= 4 && documentedRows.count == flagOnly.count, "\(flagOnly.count) flags, \(documentedRows.count) rows")
            for line in flagOnly {
                let flag = line.dropFirst(2).prefix { $0 != " " && $0 != "," }
                #expect(documentedRows.contains { $0.hasPrefix("| — | `\(flag)") }, "docs/configuration.md lacks \(flag)")
            }
            // Both lists of reasons (no shared rate budget, no endpoint of its own), each line of each.
            let reasons =
                help.components(separatedBy: "Upstreams without a shared rate budget").dropFirst().first?.split(separator: "\n").dropFirst()
                .filter { $0.hasPrefix("  ") } ?? []
            #expect(reasons.count >= 4)
            let documented = try String(contentsOf: FeedProxyProcess.repositoryRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
            for line in reasons {
                let parts = line.dropFirst(2).split(separator: ":", maxSplits: 1)
                #expect(parts.count == 2 && documented.contains("- `\(parts[0])`:\(parts[1])"), "docs/configuration.md lacks: \(line)")
            }
            let readme = try table("README.md")
            #expect(readme.count >= 8, "the README lists the settings a newcomer needs")
            for row in readme.subtracting(rows) { Issue.record("README row differs from --help: \(row)") }
        }
    }

    @Test func committedOpenAPIDocumentMatchesTheServedOne() async throws {
        try await offPool {
            let h = try Harness()
            let served = try JSONSerialization.jsonObject(with: Data(try h.get("/openapi.json").body)) as? NSDictionary
            let committed =
                try JSONSerialization.jsonObject(with: Data(contentsOf: FeedProxyProcess.repositoryRoot.appendingPathComponent("docs/openapi.json")))
                as? NSDictionary
            #expect(served != nil && served == committed, "run swift build, then python3 scripts/generate/openapi.py")
        }
    }

    /// The README's route table and docs/API.md's operation list are the served document's
    /// operations, as scripts/generate/route-tables.py writes them (no route listed by hand).
    @Test func routeTablesMatchTheServedDocument() async throws {
        try await offPool {
            let h = try Harness()
            let document = FileManager.default.temporaryDirectory.appendingPathComponent("feedproxy-openapi-\(getpid()).json")
            try Data(try h.get("/openapi.json").body).write(to: document)
            defer { try? FileManager.default.removeItem(at: document) }
            let script = FeedProxyProcess.repositoryRoot.appendingPathComponent("scripts/generate/route-tables.py").path
            let result = try Spawned.run("/usr/bin/env", ["python3", script, "--check", "--document", document.path])
            #expect(
                result.status == 0, "\(String(decoding: result.stdout, as: UTF8.self))run swift build, then python3 scripts/generate/openapi.py")
        }
    }
}
