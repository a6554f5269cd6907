import FeedFormats
import Primitives

/// Kiva's GraphQL API (`POST /graphql`): the queries we send and the shape we read.
enum KivaGraphQL {
    /// Every field a `Loan` is made of, for lists and for one loan.
    static let loanFields = """
        id name use loanAmount status loanFundraisingInfo { fundedAmount } \
        geocode { city country { name isoCode } } sector { name } activity { name } image { url } \
        fundraisingDate plannedExpirationDate borrowerCount lenders(limit: 0) { totalCount } tags \
        ... on LoanPartner { partnerName }
        """

    /// The list query. Filter values are inlined from the validated `KivaQuery` (sector ids,
    /// upper-case ISO codes and enum names only), so no GraphQL input type names are needed.
    static func query(_ q: KivaQuery) -> String {
        var filters = ["status: fundraising"]
        if !q.sectors.isEmpty { filters.append("sector: [\(q.sectors.map { String($0.id) }.joined(separator: ", "))]") }
        if !q.countries.isEmpty { filters.append("country: [\(q.countries.map { "\"\($0)\"" }.joined(separator: ", "))]") }
        if let gender = q.gender { filters.append("gender: \(gender.rawValue)") }
        return "query Loans($limit: Int!, $offset: Int!) { lend { loans(filters: {\(filters.joined(separator: ", "))}, sortBy: \(q.sort.graphQL), "
            + "limit: $limit, offset: $offset) { totalCount values { \(loanFields) } } } }"
    }

    static let loanQuery = "query Loan($id: Int!) { lend { loan(id: $id) { \(loanFields) description } } }"

    static func requestBody(_ q: KivaQuery) -> [UInt8] {
        struct Body: Encodable {
            struct Variables: Encodable { let limit: Int; let offset: Int }
            let query: String
            let variables: Variables
        }
        return (try? FeedJSON.encode(Body(query: query(q), variables: .init(limit: q.limit, offset: (q.page - 1) * q.limit)))) ?? []
    }

    static func loanRequestBody(id: Int) -> [UInt8] {
        struct Body: Encodable {
            struct Variables: Encodable { let id: Int }
            let query: String
            let variables: Variables
        }
        return (try? FeedJSON.encode(Body(query: loanQuery, variables: .init(id: id)))) ?? []
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

    struct LoanResponse: Decodable {
        struct DataField: Decodable { let lend: Lend }
        struct Lend: Decodable { let loan: Value? }
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
        let description: String?

        var loan: Loan? {
            guard id > 0 else { return nil }
            return Loan(
                id: id, name: name, use: use,
                amount: loanAmount?.value, fundedAmount: loanFundraisingInfo?.fundedAmount?.value,
                status: status, country: geocode?.country?.name, countryCode: geocode?.country?.isoCode,
                town: geocode?.city.flatMap { $0.isEmpty ? nil : $0 },
                sector: sector?.name, activity: activity?.name, imageUrl: image?.url.flatMap { URLReference.absolute($0) },
                images: image?.url.flatMap { URLReference.absolute($0) }.flatMap(LoanImages.from(url:)),
                postedAt: Timestamp.iso8601UTC(fundraisingDate), expiresAt: Timestamp.iso8601UTC(plannedExpirationDate),
                borrowerCount: FeedNumber.count(borrowerCount), lenderCount: FeedNumber.count(lenders?.totalCount), partnerName: partnerName,
                tags: tags ?? [], description: description.map(HTMLText.plain))
        }
    }

    static func normalise(_ body: [UInt8], page: Int, limit: Int) throws(ClientError) -> FeedEnvelope<Loan> {
        let loans = try FeedJSON.decode(Response.self, from: body, source: SourceName.kiva).data.lend.loans
        let items = loans.values.elements.compactMap { v -> Loan? in
            var loan = v.loan
            loan?.description = nil  // lists stay small: the story is in GET /loans/{id}
            return loan
        }
        let page = FeedNumber.count(loans.totalCount).map { PageInfo(number: page, size: limit, total: $0) }
        return FeedEnvelope(source: SourceName.kiva, title: nil, updated: nil, items: items, page: page)
    }

    static func normaliseLoan(_ body: [UInt8]) throws(ClientError) -> ItemEnvelope<Loan> {
        guard let loan = try FeedJSON.decode(LoanResponse.self, from: body, source: SourceName.kiva).data.lend.loan?.loan else {
            throw ClientError(status: 404, code: "loan_not_found", message: "no loan has this id")
        }
        return ItemEnvelope(source: SourceName.kiva, item: loan)
    }
}
