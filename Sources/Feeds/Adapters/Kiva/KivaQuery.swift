import Primitives

/// A validated `/loans` request: paging, filters and order, in one canonical form that is
/// both the cache key and the query of its paging links.
struct KivaQuery: Sendable, Equatable {
    var page: Int
    var limit: Int
    /// Sorted by id, no repeats.
    var sectors: [KivaSector]
    /// ISO 3166-1 alpha-2, upper case, sorted, no repeats.
    var countries: [String]
    var gender: KivaGender?
    var sort: KivaSort

    static let maxCountries = 50

    init(_ p: QueryParameters) throws(ClientError) {
        page = try p.int("page", in: 1...10_000, default: 1)
        limit = try p.int("limit", in: 1...100, default: 20)
        var sectors: Set<KivaSector> = []
        for text in p.list("sector") {
            guard let sector = KivaSector(slug: text) else {
                throw .invalidParameter("sector must be one or more of: \(KivaSector.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            sectors.insert(sector)
        }
        self.sectors = sectors.sorted { $0.id < $1.id }
        var countries: Set<String> = []
        for text in p.list("country") {
            guard text.utf8.count == 2, text.utf8.allSatisfy({ (65...90).contains($0) || (97...122).contains($0) }) else {
                throw .invalidParameter("country must be ISO 3166-1 alpha-2 codes such as PE or KE (repeated or comma-separated)")
            }
            countries.insert(text.uppercased())
        }
        guard countries.count <= Self.maxCountries else { throw .invalidParameter("country may list at most \(Self.maxCountries) codes") }
        self.countries = countries.sorted()
        gender = try p.choice("gender", KivaGender.allCases.map(\.rawValue)).flatMap(KivaGender.init(rawValue:))
        if let text = p.value("sort") {
            guard let sort = KivaSort.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else {
                throw .invalidParameter("sort must be one of: \(KivaSort.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self.sort = sort
        } else {
            sort = .newest
        }
    }

    var isUnfiltered: Bool { sectors.isEmpty && countries.isEmpty && gender == nil && sort == .newest }

    /// The query string of this request at `page`: the parameters that differ from the
    /// defaults, in one order (links, and with the page the cache key).
    func query(page: Int) -> String {
        var parts = ["page=\(page)", "limit=\(limit)"]
        if !sectors.isEmpty { parts.append("sector=" + sectors.map(\.rawValue).joined(separator: ",")) }
        if !countries.isEmpty { parts.append("country=" + countries.joined(separator: ",")) }
        if let gender { parts.append("gender=\(gender.rawValue)") }
        if sort != .newest { parts.append("sort=\(sort.rawValue)") }
        return parts.joined(separator: "&")
    }

    var cacheKey: String { "loans|" + query(page: page) }
}

/// Kiva's loan sectors, by the ids its lend API's sector facets use.
package enum KivaSector: String, CaseIterable, Sendable, Hashable {
    case agriculture, arts, clothing, construction, education, entertainment, food, health, housing, manufacturing
    case personalUse = "personal-use"
    case retail, services, transportation, wholesale

    package var id: Int {
        switch self {
        case .agriculture: return 1
        case .transportation: return 3
        case .services: return 4
        case .clothing: return 5
        case .health: return 6
        case .retail: return 7
        case .manufacturing: return 8
        case .arts: return 9
        case .housing: return 10
        case .food: return 12
        case .wholesale: return 13
        case .construction: return 14
        case .education: return 15
        case .personalUse: return 16
        case .entertainment: return 17
        }
    }

    /// `retail`, `Retail`, `personal use`, `Personal-Use` or the sector's id.
    init?(slug: String) {
        let folded = slug.lowercased().replacingSpaces()
        if let byName = KivaSector(rawValue: folded) {
            self = byName
        } else if let n = Int(slug), let byID = KivaSector.allCases.first(where: { $0.id == n }) {
            self = byID
        } else {
            return nil
        }
    }
}

package enum KivaGender: String, CaseIterable, Sendable {
    case female, male, nonbinary
}

/// The orders `/loans` offers, and what each is called by Kiva's GraphQL `sortBy` and by
/// its REST v1 `loans/search` `sort_by`.
package enum KivaSort: String, CaseIterable, Sendable {
    case newest, expiring, amountLeft, popularity

    var graphQL: String {
        switch self {
        case .newest: return "newest"
        case .expiring: return "expiringSoon"
        case .amountLeft: return "amountLeft"
        case .popularity: return "popularity"
        }
    }

    var rest: String {
        switch self {
        case .newest: return "newest"
        case .expiring: return "expiration"
        case .amountLeft: return "amount_remaining"
        case .popularity: return "popularity"
        }
    }
}

extension String {
    fileprivate func replacingSpaces() -> String { String(map { $0 == " " || $0 == "_" ? "-" : $0 }) }
}
