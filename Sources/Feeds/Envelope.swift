/// The one shape every list response has.
public struct FeedEnvelope<Item: Codable & Sendable>: Codable, Sendable {
    public var source: String
    public var title: String?
    public var updated: String?
    public var count: Int
    public var items: [Item]
    public var page: PageInfo?

    public init(source: String, title: String?, updated: String?, items: [Item], page: PageInfo?) {
        self.source = source
        self.title = title
        self.updated = updated
        self.count = items.count
        self.items = items
        self.page = page
    }
}

public struct PageInfo: Codable, Sendable, Equatable {
    public var number: Int
    public var size: Int
    public var total: Int
    public var pages: Int

    public init(number: Int, size: Int, total: Int) {
        self.number = number
        self.size = size
        self.total = total
        // Division first: `total + size - 1` would overflow for a total near Int.max.
        self.pages = size > 0 && total > 0 ? total / size + (total % size == 0 ? 0 : 1) : 0
    }
}
