import Primitives

/// Kiva's legacy REST API (`/v1/loans/newest.json`): `paging` + `loans`.
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

    struct Location: Decodable { let country_code: String?; let country: String?; let town: String? }
    struct Image: Decodable { let id: Int? }
    struct Tag: Decodable { let name: String? }

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
    }

    static func normalise(_ body: [UInt8]) throws(ClientError) -> FeedEnvelope<Feeds.Loan> {
        let response = try FeedJSON.decode(Response.self, from: body, source: "kiva")
        let items = response.loans.elements.compactMap { l -> Feeds.Loan? in
            guard l.id > 0 else { return nil }
            return Feeds.Loan(
                id: l.id, name: l.name, use: l.use,
                amount: l.loan_amount?.value, fundedAmount: l.funded_amount?.value, status: l.status,
                country: l.location?.country, countryCode: l.location?.country_code,
                town: l.location?.town.flatMap { $0.isEmpty ? nil : $0 },
                sector: l.sector, activity: l.activity,
                imageUrl: l.image?.id.map { "https://www.kiva.org/img/w800/\($0).jpg" },
                postedAt: Timestamp.iso8601UTC(l.posted_date), expiresAt: Timestamp.iso8601UTC(l.planned_expiration_date),
                borrowerCount: FeedNumber.count(l.borrower_count), lenderCount: FeedNumber.count(l.lender_count), partnerName: nil,
                tags: (l.tags ?? []).compactMap(\.name))
        }
        let p = response.paging
        var page: PageInfo?
        if let number = FeedNumber.count(p.page), let size = FeedNumber.count(p.page_size), let total = FeedNumber.count(p.total) {
            page = PageInfo(number: number, size: size, total: total)
            if let pages = FeedNumber.count(p.pages) { page?.pages = pages }
        }
        return FeedEnvelope(source: "kiva", title: nil, updated: nil, items: items, page: page)
    }
}
