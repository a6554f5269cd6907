/// Where Redis is: `redis://[[user]:password@]host[:port][/db]`.
public struct RedisEndpoint: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var database: Int
    public var username: String?
    public var password: String?

    public struct InvalidURL: Error, CustomStringConvertible {
        public let description: String
    }

    public init(url: String) throws(InvalidURL) {
        guard url.hasPrefix("redis://") else {
            throw InvalidURL(description: "REDIS_URL must start with redis:// (rediss:// is not supported: hiredis 0.14 has no TLS)")
        }
        var rest = Substring(url.dropFirst("redis://".count))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let db = rest[rest.index(after: slash)...]
            if !db.isEmpty {
                guard let n = Int(db), (0...15_999).contains(n) else { throw InvalidURL(description: "REDIS_URL database must be a number") }
                database = n
            }
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            // Percent-decoded (RFC 3986): a password with `@`, `/` or `:` is written %40, %2F, %3A.
            if let colon = credentials.firstIndex(of: ":") {
                let user = credentials[..<colon]
                username = user.isEmpty ? nil : try Self.decoded(user)
                password = try Self.decoded(credentials[credentials.index(after: colon)...])
            } else {
                password = try Self.decoded(credentials)
            }
        }
        var host = rest
        var port = 6379
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else {
                throw InvalidURL(description: "REDIS_URL port must be 1–65535")
            }
            port = p
            host = rest[..<colon]
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { throw InvalidURL(description: "REDIS_URL needs a host") }
        self.host = String(host)
        self.port = port
        self.database = database
    }

    /// An endpoint by address (a primary found through Sentinel), with the URL's credentials.
    public init(host: String, port: Int, database: Int = 0, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.username = username
        self.password = password
    }

    static func decoded(_ text: Substring) throws(InvalidURL) -> String {
        var out: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        while let b = bytes.next() {
            guard b == UInt8(ascii: "%") else {
                out.append(b)
                continue
            }
            guard let h = bytes.next(), let l = bytes.next(), let hi = hex(h), let lo = hex(l) else {
                throw InvalidURL(description: "REDIS_URL credentials have a bad percent-escape")
            }
            out.append(hi << 4 | lo)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// A `host:port` (a Sentinel).
public struct RedisAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, `[v6]:port`, or a bare host (26379, Sentinel's port).
    public init?(_ text: some StringProtocol) {
        var rest = Substring(text)
        var port = 26379
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else { return nil }
            port = p
            rest = rest[..<colon]
        }
        if rest.hasPrefix("["), rest.hasSuffix("]") { rest = rest.dropFirst().dropLast() }
        guard !rest.isEmpty, !rest.contains(" ") else { return nil }
        self.init(host: String(rest), port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
