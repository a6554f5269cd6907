import CHiredis

/// A Redis reply, copied out of hiredis' reply object.
public enum RedisValue: Sendable, Equatable {
    case bulk([UInt8])
    case integer(Int)
    case array([RedisValue])
    case null
    case status(String)
    case error(String)

    /// Copies a hiredis reply; depth-limited so a hostile server cannot exhaust the stack (an
    /// XREAD reply nests five deep: streams, a stream, its entries, an entry, its fields).
    init(reply: UnsafeMutablePointer<redisReply>, depth: Int = 0) {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STRING:
            self = .bulk(Self.bytes(r.str, r.len))
        case REDIS_REPLY_INTEGER:
            self = .integer(Int(truncatingIfNeeded: r.integer))
        case REDIS_REPLY_NIL:
            self = .null
        case REDIS_REPLY_STATUS:
            self = .status(String(decoding: Self.bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            self = .error(String(decoding: Self.bytes(r.str, r.len), as: UTF8.self))
        case REDIS_REPLY_ARRAY:
            guard depth < 6, let elements = r.element else {
                self = depth < 6 ? .array([]) : .error("reply nested too deeply")
                return
            }
            var items: [RedisValue] = []
            items.reserveCapacity(r.elements)
            for i in 0..<r.elements {
                if let child = elements[i] { items.append(RedisValue(reply: child, depth: depth + 1)) } else { items.append(.null) }
            }
            self = .array(items)
        default:
            self = .error("unknown reply type \(r.type)")
        }
    }

    private static func bytes(_ p: UnsafeMutablePointer<CChar>?, _ len: Int) -> [UInt8] {
        guard let p, len > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: len))
    }

    public var bytes: [UInt8]? {
        if case .bulk(let b) = self { return b }
        return nil
    }

    /// A bulk string or integer reply read as an integer.
    public var int: Int? {
        switch self {
        case .integer(let i): return i
        case .bulk(let b): return Int(String(decoding: b, as: UTF8.self))
        default: return nil
        }
    }

    public var elements: [RedisValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
}

/// Why a command produced no value. Every one of these means "do as if Redis were not there".
public enum RedisFailure: Error, Sendable, Equatable {
    /// Not connected (down, backing off, queue full): nothing was sent.
    case unavailable
    /// No reply within the command deadline.
    case timeout
    /// The server answered with an error (OOM, NOSCRIPT, WRONGTYPE, …) or the reply was unusable.
    case error(String)

    public var outcome: String {
        switch self {
        case .unavailable: return "unavailable"
        case .timeout: return "timeout"
        case .error: return "error"
        }
    }
}
