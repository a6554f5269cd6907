/// One rendition of an image: its URL, its pixel size where the upstream documents it, and
/// the longest edge it is scaled to (always known), so a cell picks by size, not by string surgery.
public struct ImageSize: Codable, Sendable, Equatable {
    public var url: String
    public var width: Int?
    public var height: Int?
    public var maxEdge: Int

    init(url: String, square: Int) {
        self.init(url: url, width: square, height: square, maxEdge: square)
    }

    init(url: String, width: Int?, height: Int?, maxEdge: Int) {
        self.url = url
        self.width = width
        self.height = height
        self.maxEdge = maxEdge
    }
}

/// Flickr's size suffixes (https://www.flickr.com/services/api/misc.urls.html): `s` and `q`
/// are squares cropped to 75 and 150 px; the others keep the aspect ratio with the longest
/// edge at 100 (`t`), 240 (`m`), 320 (`n`), 640 (`z`) or 1024 (`b`) px.
public struct PhotoImages: Codable, Sendable, Equatable {
    public var s: ImageSize
    public var q: ImageSize
    public var t: ImageSize
    public var m: ImageSize
    public var n: ImageSize
    public var z: ImageSize
    public var b: ImageSize

    /// From the feed's `_m` URL; nil when it does not have that shape. The URL is split
    /// once around its `_m.` and each size joined from the two halves.
    static func from(mediumURL url: String) -> PhotoImages? {
        guard let (head, tail) = url.splitAtLast("_m.") else { return nil }
        func variant(_ letter: String) -> String { head + "_" + letter + "." + tail }
        func edge(_ letter: String, _ px: Int) -> ImageSize { ImageSize(url: variant(letter), width: nil, height: nil, maxEdge: px) }
        return PhotoImages(
            s: ImageSize(url: variant("s"), square: 75), q: ImageSize(url: variant("q"), square: 150), t: edge("t", 100),
            m: ImageSize(url: url, width: nil, height: nil, maxEdge: 240),
            n: edge("n", 320), z: edge("z", 640), b: edge("b", 1024))
    }
}

/// iTunes artwork: squares of 30, 60, 100 and 600 px (`artworkUrl30` … `artworkUrl600`).
public struct PodcastImages: Codable, Sendable, Equatable {
    public var px30: ImageSize
    public var px60: ImageSize
    public var px100: ImageSize
    public var px600: ImageSize

    enum CodingKeys: String, CodingKey {
        case px30 = "30", px60 = "60", px100 = "100", px600 = "600"
    }

    /// The sizes iTunes sent, the missing ones derived from the 600 px URL's `600x600bb`
    /// segment (the artwork service renders any `NxNbb`); nil without a usable URL.
    static func from(_ given: [Int: String?]) -> PodcastImages? {
        func url(_ px: Int) -> String? {
            if let u = given[px] ?? nil, !u.isEmpty { return u }
            return (given[600] ?? nil)?.replacingLast("600x600bb", with: "\(px)x\(px)bb")
        }
        guard let a = url(30), let b = url(60), let c = url(100), let d = url(600) else { return nil }
        return PodcastImages(
            px30: ImageSize(url: a, square: 30), px60: ImageSize(url: b, square: 60), px100: ImageSize(url: c, square: 100),
            px600: ImageSize(url: d, square: 600))
    }
}

/// A publisher's image through FeedProxy's image proxy (`/images`), at 60, 120, 300 and 600
/// px wide, the height following the image (podcast artwork is square).
public struct ProxiedImages: Codable, Sendable, Equatable {
    public var px60: ImageSize
    public var px120: ImageSize
    public var px300: ImageSize
    public var px600: ImageSize

    enum CodingKeys: String, CodingKey {
        case px60 = "60", px120 = "120", px300 = "300", px600 = "600"
    }
}

/// Kiva's image service renders a stored image at a size named in its path
/// (`/img/<size>/<id>.jpg`): `w80h80` (80×80, cropped), `w480h300` (480×300) and `w800`
/// (800 px wide, the height following the photo).
public struct LoanImages: Codable, Sendable, Equatable {
    public var w80h80: ImageSize
    public var w480h300: ImageSize
    public var w800: ImageSize

    /// From any Kiva image URL of that shape; nil otherwise.
    static func from(url: String) -> LoanImages? {
        let parts = url.split(separator: "/", omittingEmptySubsequences: false)
        // …/img/<size>/<id>.jpg: the size is the second-last path segment, after "img".
        guard parts.count >= 3, parts[parts.count - 3] == "img", !parts[parts.count - 2].isEmpty else { return nil }
        func sized(_ name: String) -> String { (parts.dropLast(2) + [Substring(name), parts[parts.count - 1]]).joined(separator: "/") }
        return LoanImages(
            w80h80: ImageSize(url: sized("w80h80"), width: 80, height: 80, maxEdge: 80),
            w480h300: ImageSize(url: sized("w480h300"), width: 480, height: 300, maxEdge: 480),
            w800: ImageSize(url: sized("w800"), width: 800, height: nil, maxEdge: 800))
    }
}

extension String {
    /// The text before and after the last occurrence of `needle` (a byte search, no
    /// Foundation); nil when `needle` does not occur.
    func splitAtLast(_ needle: String) -> (String, String)? {
        let n = Array(needle.utf8)
        var bytes = self
        return bytes.withUTF8 { b -> (String, String)? in
            guard !n.isEmpty, b.count >= n.count else { return nil }
            for i in stride(from: b.count - n.count, through: 0, by: -1) where b[i] == n[0] && b[i..<(i + n.count)].elementsEqual(n) {
                return (
                    String(decoding: UnsafeBufferPointer(rebasing: b[..<i]), as: UTF8.self),
                    String(decoding: UnsafeBufferPointer(rebasing: b[(i + n.count)...]), as: UTF8.self)
                )
            }
            return nil
        }
    }

    /// The string with the last occurrence of `needle` replaced; nil when it does not occur.
    func replacingLast(_ needle: String, with replacement: String) -> String? {
        splitAtLast(needle).map { $0 + replacement + $1 }
    }
}
