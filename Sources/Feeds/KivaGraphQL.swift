import Primitives

/// Kiva's GraphQL API (`POST /graphql`): the query we send and the shape we read.
enum KivaGraphQL {
    static let query = """
        query NewestLoans($limit: Int!, $offset: Int!) { lend { loans(filters: {status: fundraising}, sortBy: newest, limit: $limit, offset: $offset) { \
        totalCount values { id name use loanAmount status loanFundraisingInfo { fundedAmount } \
        geocode { city country { name isoCode } } sector { name } activity { name } image { url } \
        fundraisingDate plannedExpirationDate borrowerCount lenders(limit: 0) { totalCount } tags \
        ... on LoanPartner { partnerName } } } } }
        """

    static func requestBody(limit: Int, offset: Int) -> [UInt8] {
        struct Body: Encodable {
            struct Variables: Encodable { let limit: Int; let offset: Int }
            let query: String
            let variables: Variables
        }
        return (try? FeedJSON.encode(Body(query: query, variables: .init(limit: limit, offset: offset)))) ?? []
    }

    struct Response: Decodable {
        struct DataField: Decodable { let lend: Lend }
        struct Lend: Decodable { let loans: Loans }
        struct Loans: Decodable {
            let totalCount: Int?
            let values: DroppingInvalid<Value>
        }
        let data: DataField
    }

    struct Named: Decodable { let name: String? }
    struct Country: Decodable { let name: String?; let isoCode: String? }
    struct Geocode: Decodable { let city: String?; let country: Country? }
    struct Image: Decodable { let url: String? }
    struct Count: Decodable { let totalCount: Int? }
    struct Fundraising: Decodable { let fundedAmount: FlexibleNumber? }

    struct Value: Decodable {
        let id: Int
        let name: String?
        let use: String?
        let loanAmount: FlexibleNumber?
        let status: String?
        let loanFundraisingInfo: Fundraising?
        let geocode: Geocode?
        let sector: Named?
        let activity: Named?
        let image: Image?
        let fundraisingDate: String?
        let plannedExpirationDate: String?
        let borrowerCount: Int?
        let lenders: Count?
        let tags: [String]?
        let partnerName: String?
    }

    static func normalise(_ body: [UInt8], page: Int, limit: Int) throws(ClientError) -> FeedEnvelope<Loan> {
        let response = try FeedJSON.decode(Response.self, from: body, source: "kiva")
        let loans = response.data.lend.loans
        let items = loans.values.elements.compactMap { v -> Loan? in
            guard v.id > 0 else { return nil }
            return Loan(
                id: v.id, name: v.name, use: v.use,
                amount: v.loanAmount?.value, fundedAmount: v.loanFundraisingInfo?.fundedAmount?.value,
                status: v.status, country: v.geocode?.country?.name, countryCode: v.geocode?.country?.isoCode,
                town: v.geocode?.city.flatMap { $0.isEmpty ? nil : $0 },
                sector: v.sector?.name, activity: v.activity?.name, imageUrl: v.image?.url,
                postedAt: Timestamp.iso8601UTC(v.fundraisingDate), expiresAt: Timestamp.iso8601UTC(v.plannedExpirationDate),
                borrowerCount: FeedNumber.count(v.borrowerCount), lenderCount: FeedNumber.count(v.lenders?.totalCount), partnerName: v.partnerName,
                tags: v.tags ?? [])
        }
        let page = FeedNumber.count(loans.totalCount).map { PageInfo(number: page, size: limit, total: $0) }
        return FeedEnvelope(source: "kiva", title: nil, updated: nil, items: items, page: page)
    }
}
