import Foundation
import Testing
import TestSupport

/// Issue 21 against the real binary and the fixture upstream.
@Suite(.offPool) struct AppFeaturesEndToEndTests {
    @Test func podcastById() async throws {
        try await offPool {
            let h = try Harness()
            let r = try h.get("/podcasts/1200361736")
            #expect(r.status == 200, "\(r.text)")
            let item = h.json(r)["item"] as? [String: Any] ?? [:]
            #expect(item["title"] as? String == "Swift by Sundell")
            #expect((item["images"] as? [String: Any])?.keys.sorted() == ["100", "30", "60", "600"])
            #expect(try h.get("/podcasts/1200361736").header("X-Cache") == "HIT")
            #expect(try h.get("/podcasts/42").status == 404)
            #expect(try h.get("/podcasts/abc").status == 400)
        }
    }

    @Test func loansFilteredSortedAndPagedWithLinks() async throws {
        try await offPool {
            let h = try Harness()
            let r = try h.get("/loans?sector=retail&country=pe,KE&sort=expiring&limit=2")
            #expect(r.status == 200, "\(r.text)")
            let json = h.json(r)
            let items = json["items"] as? [[String: Any]] ?? []
            #expect(!items.isEmpty && items.allSatisfy { $0["sector"] as? String == "Retail" && ["PE", "KE"].contains($0["countryCode"] as? String ?? "") })
            let expiries = items.compactMap { $0["expiresAt"] as? String }
            #expect(expiries == expiries.sorted())
            let page = json["page"] as? [String: Any] ?? [:]
            #expect(page["first"] as? String == "/loans?page=1&limit=2&sector=retail&country=KE,PE&sort=expiring")
            let link = try #require(r.header("Link"))
            #expect(link.contains(#"</loans?page=1&limit=2&sector=retail&country=KE,PE&sort=expiring>; rel="first""#))
            // An equivalent request is the same entry, and a hit keeps the Link header.
            let again = try h.get("/loans?sort=EXPIRING&country=KE&country=pe&sector=Retail&limit=2")
            #expect(again.header("X-Cache") == "HIT" && again.header("Link") == link)
            // Following `next` works.
            if let next = page["next"] as? String { #expect(try h.get(next).status == 200) }
            #expect(try h.get("/loans?gender=female&limit=100").status == 200)
        }
    }

    @Test(arguments: ["/loans?sector=bogus", "/loans?country=PER", "/loans?gender=x", "/loans?sort=cheap", "/loans/0", "/loans/abc"])
    func badLoanParametersAre400(_ target: String) async throws {
        try await offPool {
            let h = try Harness()
            let r = try h.get(target)
            #expect(r.status == 400, "\(target): \(r.text)")
            #expect(h.json(r)["error"] != nil)
        }
    }

    @Test func oneLoanWithItsDescription() async throws {
        try await offPool {
            let h = try Harness()
            let r = try h.get("/loans/2812300")
            #expect(r.status == 200, "\(r.text)")
            let item = h.json(r)["item"] as? [String: Any] ?? [:]
            #expect((item["description"] as? String)?.hasPrefix("Maria has run a small business") == true)
            #expect(try h.get("/loans/999").status == 404)
        }
    }

    @Test func restModeFiltersThroughTheSearchEndpoint() async throws {
        try await offPool {
            let h = try Harness(kivaREST: true)
            let r = try h.get("/loans?country=PE")
            #expect(r.status == 200, "\(r.text)")
            let items = h.json(r)["items"] as? [[String: Any]] ?? []
            #expect(!items.isEmpty && items.allSatisfy { $0["countryCode"] as? String == "PE" })
            #expect(try h.get("/loans?gender=nonbinary").status == 400)
            #expect(try h.get("/loans/2812300").status == 200)
        }
    }

    @Test func photosCarryEverySize() async throws {
        try await offPool {
            let h = try Harness()
            let first = (h.json(try h.get("/photos?limit=1"))["items"] as? [[String: Any]])?.first ?? [:]
            let images = first["images"] as? [String: [String: Any]] ?? [:]
            #expect(images.keys.sorted() == ["b", "m", "n", "q", "s", "t", "z"])
            #expect(images["s"]?["width"] as? Int == 75)
        }
    }

    @Test func episodesCarryTheChannel() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let json = h.json(try h.get("/podcasts/1200361736/episodes?limit=1"))
            #expect(json["author"] as? String == "John Sundell")
            #expect(json["language"] as? String == "en-us")
            #expect(json.keys.contains("description") && json.keys.contains("link"))
        }
    }
}
