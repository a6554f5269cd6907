import FoundationEssentials
import HTTPServer

/// The Kiva half of the fixture upstream: GraphQL `lend.loans` with its filters (`sector`,
/// `country`, `gender`, `status`), `sortBy` and paging, `lend.loan(id:)`, and the REST
/// `newest.json`, `search.json` and `{id}.json` endpoints, all over the recorded loans.
struct FixtureKiva: Sendable {
    let graphQL: FixtureJSON?
    let rest: FixtureJSON?

    func graphQLAnswer(_ body: [UInt8]) -> Response {
        let request = FixtureJSON.parse(body)
        let query = request?["query"]?.string ?? ""
        let variables = request?["variables"]
        guard var all = graphQL, let values = all["data"]?["lend"]?["loans"]?["values"]?.array else {
            return .error(status: 500, code: "fixture", message: "bad fixture")
        }
        if query.contains("loan(id:") {
            let id = variables?["id"]?.int ?? -1
            let loan = values.first { $0["id"]?.int == id } ?? .null
            return Self.json(FixtureJSON.object(["data": .object(["lend": .object(["loan": loan])])]))
        }
        // Clamped: this server runs inside feedproxy --fixtures, and prefix(-1) would trap.
        let limit = max(0, variables?["limit"]?.int ?? 20)
        let offset = max(0, variables?["offset"]?.int ?? 0)
        let filters = Self.inside(query, "filters: {", "}")
        let sectors = Set(Self.list(Self.inside(filters, "sector: [", "]")).compactMap { Int($0) })
        let countries = Set(Self.list(Self.inside(filters, "country: [", "]")).map { $0.filter { $0 != "\"" } })
        let gender = Self.word(after: "gender: ", in: filters)
        let sort = Self.word(after: "sortBy: ", in: query) ?? "newest"
        var matching = values.filter { v in
            (sectors.isEmpty || sectors.contains(v["sector"]?["id"]?.int ?? -1))
                && (countries.isEmpty || countries.contains(v["geocode"]?["country"]?["isoCode"]?.string ?? ""))
                && (gender == nil || v["gender"]?.string == gender)
        }
        matching = Self.sorted(matching, by: sort)
        let filtered = !sectors.isEmpty || !countries.isEmpty || gender != nil
        // Unfiltered, the recorded total stands and pages repeat the recorded loans; filtered, the total is what matched.
        let page: [FixtureJSON]
        if filtered {
            page = Array(matching.dropFirst(offset).prefix(limit))
            all["data"]?["lend"]?["loans"]?["totalCount"] = .int(matching.count)
        } else {
            let start = min(offset % max(matching.count, 1), matching.count)
            page = Array(matching[start...].prefix(limit))
        }
        all["data"]?["lend"]?["loans"]?["values"] = .array(page)
        return Self.json(all)
    }

    func restAnswer(_ name: String, _ req: Request) -> Response {
        guard var all = rest, let loans = all["loans"]?.array else { return .error(status: 500, code: "fixture", message: "bad fixture") }
        if name == "newest.json" || name == "search.json" {
            let countries = Set((req.query("country_code") ?? "").split(separator: ",").map(String.init))
            let gender = req.query("gender").map { $0 == "female" ? "F" : "M" }
            let matching = loans.filter { l in
                (countries.isEmpty || countries.contains(l["location"]?["country_code"]?.string ?? ""))
                    && (gender == nil || l["borrowers"]?.array?.first?["gender"]?.string == gender)
            }
            let perPage = max(1, min(100, Int(req.query("per_page") ?? "") ?? 20))
            let page = max(1, min(10_000, Int(req.query("page") ?? "") ?? 1))
            let total = max(0, name == "search.json" ? matching.count : (all["paging"]?["total"]?.int ?? matching.count))
            // Pages cycle through the recorded loans, as the GraphQL fixture's do.
            let start = matching.isEmpty ? 0 : ((page - 1) * perPage) % matching.count
            all["loans"] = .array(Array((matching + matching)[start...].prefix(min(perPage, matching.count))))
            all["paging"] = .object([
                "page": .int(page), "page_size": .int(perPage), "total": .int(total), "pages": .int(max(1, total / perPage + (total % perPage == 0 ? 0 : 1))),
            ])
            return Self.json(all)
        }
        let id = name.hasSuffix(".json") ? Int(name.dropLast(5)) ?? -1 : -1
        guard let loan = loans.first(where: { $0["id"]?.int == id }) else { return .error(status: 404, code: "not_found", message: "no such loan") }
        return Self.json(.object(["loans": .array([loan])]))
    }

    static func sorted(_ loans: [FixtureJSON], by sort: String) -> [FixtureJSON] {
        func amount(_ v: FixtureJSON, _ path: [String]) -> Double {
            var node: FixtureJSON? = v
            for key in path { node = node?[key] }
            if case .string(let s)? = node { return Double(s) ?? 0 }
            if case .int(let i)? = node { return Double(i) }
            if case .double(let d)? = node { return d }
            return 0
        }
        switch sort {
        case "expiringSoon": return loans.sorted { ($0["plannedExpirationDate"]?.string ?? "") < ($1["plannedExpirationDate"]?.string ?? "") }
        case "amountLeft":
            func left(_ v: FixtureJSON) -> Double { amount(v, ["loanAmount"]) - amount(v, ["loanFundraisingInfo", "fundedAmount"]) }
            return loans.sorted { left($0) < left($1) }
        case "popularity": return loans.sorted { ($0["lenders"]?["totalCount"]?.int ?? 0) > ($1["lenders"]?["totalCount"]?.int ?? 0) }
        default: return loans
        }
    }

    static func inside(_ text: String, _ open: String, _ close: Character) -> String {
        guard let start = text.firstRange(of: open) else { return "" }
        let rest = text[start.upperBound...]
        return String(rest[..<(rest.firstIndex(of: close) ?? rest.endIndex)])
    }

    static func list(_ text: String) -> [String] { text.split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty } }

    static func word(after marker: String, in text: String) -> String? {
        guard let r = text.firstRange(of: marker) else { return nil }
        let word = text[r.upperBound...].prefix { $0.isLetter }
        return word.isEmpty ? nil : String(word)
    }

    static func json(_ value: FixtureJSON) -> Response {
        var r = Response(status: 200, body: value.bytes)
        r.headers.add("Content-Type", "application/json")
        return r
    }
}
