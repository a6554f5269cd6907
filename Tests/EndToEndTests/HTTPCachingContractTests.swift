import Foundation
import Testing
import TestSupport

/// The response headers read the way a downstream cache or browser reads them
/// (RFC 9110/9111): freshness from `max-age − Age`, 304s that update a stored 200,
/// validators per representation, CORS exposure, uncacheable operational routes.
@Suite(.serialized, .offPool) struct HTTPCachingContractTests {
    /// RFC 9111 §4.2.1 / §4.2.3, for a response received now with no response delay.
    static func remainingFreshness(_ r: RawClient.Response) -> Int? {
        guard let age = Int(r.header("Age") ?? ""), let maxAge = directive("max-age", in: r) else { return nil }
        return maxAge - age
    }

    static func directive(_ name: String, in r: RawClient.Response) -> Int? {
        for part in (r.header("Cache-Control") ?? "").split(separator: ",") {
            let kv = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0] == name { return Int(kv[1]) }
        }
        return nil
    }

    @Test func maxAgeIsTheFullLifetimeAndAgeIsHonest() async throws {
        try await offPool {
            let h = try Harness(environment: ["CACHE_TTL_PHOTOS": "4", "CACHE_SWR_FACTOR": "2"])
            let miss = try h.get("/photos")
            #expect(Self.directive("max-age", in: miss) == 4)
            #expect(miss.header("Age") == "0")
            usleep(2_100_000)
            let hit = try h.get("/photos")
            #expect(hit.header("X-Cache") == "HIT")
            // The same lifetime every time; only Age moves. A cache subtracting Age once sees 1–2 s left.
            #expect(Self.directive("max-age", in: hit) == 4)
            #expect(Self.directive("stale-while-revalidate", in: hit) == 8)
            let age = Int(hit.header("Age") ?? "") ?? -1
            #expect((2...3).contains(age))
            let remaining = try #require(Self.remainingFreshness(hit))
            #expect((1...2).contains(remaining))
        }
    }

    @Test func notModifiedCarriesTheHeadersTheOKWould() async throws {
        try await offPool {
            let h = try Harness()
            _ = try h.get("/loans")
            for encoding in [[], ["Accept-Encoding: gzip"]] {
                let ok = try h.get("/loans", headers: encoding)
                let etag = try #require(ok.header("ETag"))
                let notModified = try h.get("/loans", headers: encoding + ["If-None-Match: \(etag)"])
                #expect(notModified.status == 304)
                // RFC 9110 §15.4.5: a cache updating its stored 200 from this 304 keeps the same metadata.
                for name in ["Cache-Control", "ETag", "Vary", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers"] {
                    #expect(notModified.header(name) != nil, "\(name) missing on 304")
                    #expect(notModified.header(name) == ok.header(name), "\(name) differs between 200 and 304")
                }
                #expect(notModified.header("Date") != nil)
                #expect(notModified.header("Content-Encoding") == nil)
            }
        }
    }

    @Test func validatorsAreComparedAgainstTheSelectedRepresentationOnly() async throws {
        try await offPool {
            let h = try Harness()
            _ = try h.get("/photos")
            let identity = try #require(try h.get("/photos").header("ETag"))
            let gzipTag = try #require(try h.get("/photos", headers: ["Accept-Encoding: gzip"]).header("ETag"))
            #expect(identity != gzipTag)
            // The identity tag does not validate the gzip representation, nor the reverse.
            let crossed = try h.get("/photos", headers: ["Accept-Encoding: gzip", "If-None-Match: \(identity)"])
            #expect(crossed.status == 200)
            #expect(crossed.header("Content-Encoding") == "gzip")
            #expect(crossed.header("ETag") == gzipTag)
            #expect(try h.get("/photos", headers: ["If-None-Match: \(gzipTag)"]).status == 200)
            // Each tag validates its own representation, in a list or weak.
            #expect(try h.get("/photos", headers: ["Accept-Encoding: gzip", "If-None-Match: \"x\", \(gzipTag)"]).status == 304)
            #expect(try h.get("/photos", headers: ["If-None-Match: W/\(identity)"]).status == 304)
            #expect(try h.get("/photos", headers: ["If-None-Match: *"]).status == 304)
        }
    }

    @Test func browserScriptsCanReadTheDocumentedHeaders() async throws {
        try await offPool {
            let h = try Harness(environment: ["RATE_LIMIT_ITUNES_PER_MIN": "1"])
            let expected: Set<String> = ["etag", "age", "x-cache", "x-request-id", "retry-after"]
            func exposed(_ r: RawClient.Response) -> Set<String> {
                Set((r.header("Access-Control-Expose-Headers") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
            }
            let ok = try h.get("/podcasts?term=swift", headers: ["Origin: https://app.example"])
            #expect(ok.header("Access-Control-Allow-Origin") == "*")
            #expect(expected.isSubset(of: exposed(ok)))
            let limited = try h.get("/podcasts?term=history", headers: ["Origin: https://app.example"])
            #expect(limited.status == 503)
            #expect(limited.header("Retry-After") != nil)
            #expect(expected.isSubset(of: exposed(limited)))
            #expect(limited.header("Cache-Control") == "no-store")

            let none = try Harness(environment: ["CORS_ORIGIN": ""])
            let plain = try none.get("/healthz")
            #expect(plain.header("Access-Control-Allow-Origin") == nil)
            #expect(plain.header("Access-Control-Expose-Headers") == nil)
        }
    }

    @Test func operationalRoutesAndErrorsAreNeverStored() async throws {
        try await offPool {
            let h = try Harness()
            for target in ["/healthz", "/readyz", "/metrics", "/nope", "/podcasts"] {
                let r = try h.get(target)
                #expect(r.header("Cache-Control") == "no-store", "\(target): \(r.header("Cache-Control") ?? "none")")
            }
        }
    }

    @Test func invalidHostIsA400() async throws {
        try await offPool {
            let h = try Harness()
            for host in ["a b", "a/b", "a\u{7f}", "a@b", "[::1", "a:8x", "a:1:2", "%zz"] {
                let c = try RawClient(port: h.port)
                try c.send(Array("GET /healthz HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8))
                let r = try c.readResponse()
                #expect(r.status == 400, "Host \(host.debugDescription) answered \(r.status)")
                #expect(r.text.contains("\"code\":\"bad_request\""))
            }
            for host in ["localhost:8080", "127.0.0.1", "[::1]:80", "api.example.com", "xn--bcher-kva.example", ""] {
                let c = try RawClient(port: h.port)
                try c.send(Array("GET /healthz HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8))
                #expect(try c.readResponse().status == 200, "Host \(host.debugDescription)")
            }
        }
    }
}
