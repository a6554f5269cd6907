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
            if let colon = credentials.firstIndex(of: ":") {
                let user = credentials[..<colon]
                username = user.isEmpty ? nil : String(user)
                password = String(credentials[credentials.index(after: colon)...])
            } else {
                password = String(credentials)
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
}
