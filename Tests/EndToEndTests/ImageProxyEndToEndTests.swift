import Foundation
import Primitives
import Testing
import TestSupport

/// Artwork through FeedProxy: episode lists hand out signed `/images` URLs, which answer
/// small images in the encoding the client accepts, cached; nothing unsigned is fetched, and
/// no hostile file gets past a clear error.
@Suite(.serialized, .offPool) struct ImageProxyEndToEndTests {
    static let key = "test-image-key"
    static let environment = ["ALLOW_PRIVATE_FEED_HOSTS": "true", "IMAGE_PROXY_KEY": key]

    static func signed(_ url: String, width: Int = 120, extra: String = "") -> String {
        let sig = Base64URL.encode(HMACSHA256(key: Array(key.utf8)).mac(Array(url.utf8)))
        let encoded = url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? url
        return "/images?url=\(encoded)&w=\(width)&sig=\(sig)" + extra
    }

    /// Width and height from a PNG's IHDR.
    static func pngSize(_ bytes: [UInt8]) -> (Int, Int)? {
        guard bytes.count > 24, bytes.prefix(4).elementsEqual([0x89, 0x50, 0x4E, 0x47]) else { return nil }
        func be(_ i: Int) -> Int { bytes[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return (be(16), be(20))
    }

    /// Issue 57: every width and encoding of an image comes from one download of its source.
    @Test func fifteenVariantsOfOneImageAreOneDownload() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            let source = h.upstream.baseURL + "/artwork/cover-3000.jpg"
            var types = Set<String>()
            for width in [60, 120, 300, 600, 1200] {
                for accept in ["image/webp", "image/avif,image/webp", "image/jpeg"] {
                    let r = try h.get(Self.signed(source, width: width), headers: ["Accept: \(accept)"])
                    #expect(r.status == 200, "\(width) \(accept): \(r.text.prefix(200))")
                    types.insert(r.header("Content-Type") ?? "")
                }
            }
            #expect(types.isSuperset(of: ["image/webp", "image/jpeg"]), "\(types)")
            #expect(h.upstream.requestCount(for: "artwork") == 1, "\(h.upstream.requestCount(for: "artwork")) downloads")
        }
    }

    @Test func anEpisodeListHandsOutThumbnailsThatAreSmallCachedAndNegotiated() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            let page = h.json(try h.get("/podcasts/1200361736/episodes"))
            let channel = page["images"] as? [String: [String: Any]] ?? [:]
            #expect(channel.keys.sorted() == ["120", "300", "60", "600"])
            let item = (page["items"] as? [[String: Any]])?.first ?? [:]
            let images = item["images"] as? [String: [String: Any]] ?? [:]
            let thumb = try #require(images["120"]?["url"] as? String)
            #expect(thumb.hasPrefix("/images?url=http%3A%2F%2F127.0.0.1%3A") && thumb.contains("%2Fartwork%2Flogo-1400.png&w=120&sig="))
            #expect(images["120"]?["width"] as? Int == 120 && images["120"]?["maxEdge"] as? Int == 120)

            // A browser that takes WebP gets WebP; one that takes only the classics gets PNG (the logo is transparent).
            let webp = try h.get(thumb, headers: ["Accept: image/avif,image/webp,image/apng,image/*,*/*;q=0.8"])
            #expect(webp.status == 200 && webp.header("Content-Type") == "image/webp" && webp.header("Vary") == "Accept")
            #expect(webp.header("Cache-Control")?.hasPrefix("public, max-age=86400") == true && webp.header("X-Cache") == "MISS")
            #expect(webp.body.count < 8_000 && String(decoding: webp.body[8..<12], as: UTF8.self) == "WEBP")
            let png = try h.get(thumb, headers: ["Accept: image/png,image/*;q=0.8"])
            #expect(png.header("Content-Type") == "image/png")
            #expect(Self.pngSize(png.body).map { [$0.0, $0.1] } == [120, 120])
            #expect(png.header("Content-Encoding") == nil, "an image is never gzipped again")

            // Each again: a hit, same bytes, and the client's ETag a 304 that still says Vary.
            let again = try h.get(thumb, headers: ["Accept: image/webp"])
            #expect(again.header("X-Cache") == "HIT" && again.body == webp.body)
            let etag = try #require(webp.header("ETag"))
            let notModified = try h.get(thumb, headers: ["Accept: image/webp", "If-None-Match: \(etag)"])
            #expect(notModified.status == 304 && notModified.header("Vary") == "Accept")
            #expect(h.upstream.requestCount(for: "artwork") == 1, "one download for both encodings, none for hits")

            // An explicit format wins over Accept.
            let jpeg = try h.get(thumb + "&format=jpeg", headers: ["Accept: image/webp"])
            #expect(jpeg.header("Content-Type") == "image/jpeg" && jpeg.body.prefix(3).elementsEqual([0xFF, 0xD8, 0xFF]))

            let metrics = try h.get("/metrics").text
            #expect(metrics.contains("feedproxy_image_decodes_total{outcome=\"resized\"} 3"))
            #expect(metrics.contains("feedproxy_cache_requests_total{source=\"images\",result=\"hit\"}"))
        }
    }

    @Test func showNotesImagesAreProxiedToo() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            let items = h.json(try h.get("/podcasts/1580000008/episodes"))["items"] as? [[String: Any]] ?? []
            let notes = items.compactMap { $0["notesHtml"] as? String }.first { $0.contains("<img") } ?? ""
            #expect(notes.contains(#"<img src="/images?url=http%3A%2F%2F127.0.0.1%3A"#) && notes.contains("%2Frss%2Fimg%2Fchart.png&amp;w=600&amp;sig="))
            #expect(!notes.contains(#"src="http"#), "the app never contacts the publisher's host")
        }
    }

    @Test func withAPublicBaseURLTheLinksAreAbsolute() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment.merging(["PUBLIC_BASE_URL": "https://api.example.com/"]) { $1 })
            let item = (h.json(try h.get("/podcasts/1200361736/episodes"))["items"] as? [[String: Any]])?.first ?? [:]
            let url = (item["images"] as? [String: [String: Any]])?["60"]?["url"] as? String ?? ""
            #expect(url.hasPrefix("https://api.example.com/images?url="))
        }
    }

    @Test func onlySignedURLsOfLadderWidthsAreFetched() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            let art = h.upstream.baseURL + "/artwork/cover-3000.jpg"
            let good = Self.signed(art)
            func code(_ target: String) throws -> (Int, String?) {
                let r = try h.get(target)
                return (r.status, h.json(r)["error"].flatMap { ($0 as? [String: Any])?["code"] as? String })
            }
            #expect(try code(good.replacingOccurrences(of: "&sig=", with: "&sig=A")) == (403, "bad_signature"))
            #expect(try code(String(good.prefix { $0 != "&" }) + "&w=120") == (403, "bad_signature"))
            let other = Self.signed(h.upstream.baseURL + "/artwork/logo-1400.png")
            let stolenSig = String(other.split(separator: "&").last ?? "")
            #expect(try code(String(good.split(separator: "&").dropLast().joined(separator: "&")) + "&" + stolenSig) == (403, "bad_signature"))
            #expect(try code(good.replacingOccurrences(of: "&w=120", with: "&w=121")) == (400, "invalid_parameter"))
            #expect(try code("/images?w=120&sig=x") == (400, "invalid_parameter"))
            #expect(try code(good + "&format=tiff") == (400, "invalid_parameter"))
            #expect(try code(Self.signed("file:///etc/passwd")) == (400, "invalid_parameter"))
            #expect(h.upstream.requestCount(for: "artwork") == 0, "nothing refused reached the publisher")
            #expect(try h.get(good).status == 200)
        }
    }

    @Test func hostileFilesAreClearErrorsAndTheServiceStaysUp() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            func answer(_ name: String) throws -> (Int, String?) {
                let r = try h.get(Self.signed(h.upstream.baseURL + "/artwork/" + name))
                return (r.status, (h.json(r)["error"] as? [String: Any])?["code"] as? String)
            }
            #expect(try answer("bomb.png") == (422, "image_too_large"))
            #expect(try answer("truncated.jpg") == (422, "image_undecodable"))
            #expect(try answer("lying.png") == (422, "image_undecodable"))
            #expect(try answer("vector.svg") == (415, "unsupported_image_type"))
            #expect(try answer("missing.png").0 == 502)
            // Remembered briefly, like any upstream 4xx: not downloaded again at once.
            let fetched = h.upstream.requestCount(for: "artwork")
            #expect(try answer("bomb.png") == (422, "image_too_large"))
            #expect(h.upstream.requestCount(for: "artwork") == fetched)
            #expect(try h.get("/healthz").status == 200)
            let metrics = try h.get("/metrics").text
            #expect(metrics.contains("feedproxy_image_decodes_total{outcome=\"too_many_pixels\"} 1"))
            #expect(metrics.contains("feedproxy_image_decodes_total{outcome=\"unsupported_type\"} 1"))
        }
    }

    @Test func aPrivateAddressNeedsTheFeedSetting() async throws {
        try await offPool {
            let h = try Harness(environment: ["IMAGE_PROXY_KEY": Self.key])
            let r = try h.get(Self.signed(h.upstream.baseURL + "/artwork/cover-3000.jpg"))
            #expect(r.status == 502 && (h.json(r)["error"] as? [String: Any])?["code"] as? String == "upstream_forbidden_address")
            #expect(h.upstream.requestCount(for: "artwork") == 0)
        }
    }

    @Test func withoutAKeyThereIsNoRouteAndNoProxiedURL() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            #expect(try h.get(Self.signed(h.upstream.baseURL + "/artwork/cover-3000.jpg")).status == 404)
            let item = (h.json(try h.get("/podcasts/1200361736/episodes"))["items"] as? [[String: Any]])?.first ?? [:]
            #expect(item["images"] is NSNull)
            #expect(!(try h.get("/").text.contains("/images")))
        }
    }
}
