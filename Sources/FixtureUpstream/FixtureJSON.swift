import FoundationEssentials

/// Just enough untyped JSON for the fixture upstream to filter and slice recorded payloads
/// (FoundationEssentials has the Codable coders but not JSONSerialization).
enum FixtureJSON: Codable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([FixtureJSON])
    case object([String: FixtureJSON])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let v = try? c.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? c.decode(Int.self) {
            self = .int(v)
        } else if let v = try? c.decode(Double.self) {
            self = .double(v)
        } else if let v = try? c.decode(String.self) {
            self = .string(v)
        } else if let v = try? c.decode([FixtureJSON].self) {
            self = .array(v)
        } else {
            self = .object(try c.decode([String: FixtureJSON].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let v): try c.encode(v)
        case .int(let v): try c.encode(v)
        case .double(let v): try c.encode(v)
        case .string(let v): try c.encode(v)
        case .array(let v): try c.encode(v)
        case .object(let v): try c.encode(v)
        }
    }

    static func parse(_ bytes: [UInt8]?) -> FixtureJSON? {
        guard let bytes else { return nil }
        return try? JSONDecoder().decode(FixtureJSON.self, from: Data(bytes))
    }

    var bytes: [UInt8] { Array((try? JSONEncoder().encode(self)) ?? Data()) }

    subscript(key: String) -> FixtureJSON? {
        get {
            if case .object(let members) = self { return members[key] }
            return nil
        }
        set {
            guard case .object(var members) = self else { return }
            members[key] = newValue
            self = .object(members)
        }
    }

    var array: [FixtureJSON]? { if case .array(let v) = self { v } else { nil } }
    var string: String? { if case .string(let v) = self { v } else { nil } }
    var int: Int? { if case .int(let v) = self { v } else { nil } }
}
