/// The podcastindex.org namespace ("Podcasting 2.0") and Apple's episode tags, as typed
/// values: every URL absolute http(s), every number finite, every list bounded.

/// `<podcast:transcript url type language rel>`.
public struct Transcript: Codable, Sendable, Equatable {
    public var url: String
    public var type: String?
    public var language: String?
    public var rel: String?
}

/// `<podcast:chapters url type>`.
public struct Chapters: Codable, Sendable, Equatable {
    public var url: String
    public var type: String?
}

/// `<podcast:person role group img href>name</podcast:person>`; the spec's defaults are
/// role `host` and group `cast`.
public struct Person: Codable, Sendable, Equatable {
    public var name: String
    public var role: String
    public var group: String
    public var href: String?
    public var img: String?
}

/// `<podcast:soundbite startTime duration>title</podcast:soundbite>`, in seconds.
public struct Soundbite: Codable, Sendable, Equatable {
    public var start: Double
    public var duration: Double
    public var title: String?
}

/// `<podcast:funding url>text</podcast:funding>`.
public struct Funding: Codable, Sendable, Equatable {
    public var url: String
    public var text: String?
}

/// How many of each repeated tag are kept (a feed's thousand persons are not a cast).
enum NamespaceLimits {
    static let perList = 50
    /// Longest free text kept in these fields (names, titles, types).
    static let textBytes = 1024
}
