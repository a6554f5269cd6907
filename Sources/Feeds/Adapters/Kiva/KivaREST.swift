import FeedFormats
import Primitives

/// Kiva's legacy REST API: `/v1/loans/newest.json` (and, with filters or another order,
/// `/v1/loans/search.json` beside it), `/v1/loans/{id}.json` for one loan.
enum KivaREST {
    struct Response: Decodable {
        struct Paging: Decodable {
            let page: Int?
            let total: Int?
            let page_size: Int?
            let pages: Int?
        }
        let paging: Paging
        let loans: DroppingInvalid<Loan>
    }

    struct LoanResponse: Decodable {
        let loans: DroppingInvalid<Loan>
    }

    struct Location: Decodable { let country_code: String?; let country: String?; let town: String? }
    struct Image: Decodable { let id: Int? }
    struct Tag: Decodable { let name: String? }
    struct Description: Decodable { let texts: [String: String]? }

    struct Loan: Decodable {
        let id: Int
        let name: String?
        let use: String?
        let status: String?
        let loan_amount: FlexibleNumber?
        let funded_amount: FlexibleNumber?
        let image: Image?
        let activity: String?
        let sector: String?
        let location: Location?
        let posted_date: String?
        let planned_expiration_date: String?
        let borrower_count: Int?
        let lender_count: Int?
        let tags: [Tag]?
        let description: Description?

        var loan: Feeds.Loan? {
            guard id > 0 else { return nil }
            let imageURL = image?.id.flatMap { FeedNumber.count($0) }.map { "https://www.kiva.org/img/w800/\($0).jpg" }
            return Feeds.Loan(
                id: id, name: name, use: use,
                amount: loan_amount?.value, fundedAmount: funded_amount?.value, status: status,
                country: location?.country, countryCode: location?.country_code,
                town: location?.town.flatMap { $0.isEmpty ? nil : $0 },
                sector: sector, activity: activity, imageUrl: imageURL, images: imageURL.flatMap(LoanImages.from(url:)),
                postedAt: Timestamp.iso8601UTC(posted_date), expiresAt: Timestamp.iso8601UTC(planned_expiration_date),
                borrowerCount: FeedNumber.count(borrower_count), lenderCount: FeedNumber.count(lender_count), partnerName: nil,
                tags: (tags ?? []).compactMap(\.name),
                // English if Kiva has it, else any language it has.
                description: (description?.texts?["en"] ?? description?.texts?.sorted { $0.key < $1.key }.first?.value).map(HTMLText.plain))
        }
    }

    /// The list URL for `q`: the configured newest-loans URL when unfiltered, else the
    /// search endpoint beside it with Kiva's own parameter names.
    static func listURL(_ configured: String, _ q: KivaQuery) throws(ClientError) -> String {
        var params = ["page=\(q.page)", "per_page=\(q.limit)"]
        guard !q.isUnfiltered else { return configured.addingQuery(params.joined(separator: "&")) }
        if q.gender == .nonbinary { throw .invalidParameter("gender nonbinary needs Kiva's GraphQL API (KIVA_LOANS_URL is set to the REST one)") }
        params += ["status=fundraising", "sort_by=\(q.sort.rest)"]
        if !q.sectors.isEmpty { params.append("sector=" + q.sectors.map { String($0.id) }.joined(separator: ",")) }
        if !q.countries.isEmpty { params.append("country_code=" + q.countries.joined(separator: ",")) }
        if let gender = q.gender { params.append("gender=\(gender.rawValue)") }
        return sibling(of: configured, "search.json").addingQuery(params.joined(separator: "&"))
    }

    /// `…/v1/loans/newest.json` → `…/v1/loans/<file>` (the query, if any, dropped).
    static func sibling(of url: String, _ file: String) -> String {
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        guard let slash = path.lastIndex(of: "/") else { return path + "/" + file }
        return String(path[...slash]) + file
    }

    static func normalise(_ body: [UInt8]) throws(ClientError) -> FeedEnvelope<Feeds.Loan> {
        let response = try FeedJSON.decode(Response.self, from: body, source: SourceName.kiva)
        let items = response.loans.elements.compactMap { l -> Feeds.Loan? in
            var loan = l.loan
            loan?.description = nil
            return loan
        }
        let p = response.paging
        var page: PageInfo?
        if let number = FeedNumber.count(p.page), let size = FeedNumber.count(p.page_size), let total = FeedNumber.count(p.total) {
            page = PageInfo(number: number, size: size, total: total)
            if let pages = FeedNumber.count(p.pages) { page?.pages = pages }
        }
        return FeedEnvelope(source: SourceName.kiva, title: nil, updated: nil, items: items, page: page)
    }

    static func normaliseLoan(_ body: [UInt8], id: Int) throws(ClientError) -> ItemEnvelope<Feeds.Loan> {
        guard let loan = try FeedJSON.decode(LoanResponse.self, from: body, source: SourceName.kiva).loans.elements.first(where: { $0.id == id })?.loan else {
            throw ClientError(status: 404, code: "loan_not_found", message: "no loan has this id")
        }
        return ItemEnvelope(source: SourceName.kiva, item: loan)
    }
}
