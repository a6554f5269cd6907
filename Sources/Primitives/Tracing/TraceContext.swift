/// W3C Trace Context (https://www.w3.org/TR/trace-context/): the trace a request belongs
/// to and this hop's span in it. A valid incoming `traceparent` is continued (its trace id
/// and flags, its `tracestate` kept); an absent or invalid one starts a new trace. Ids are
/// numbers, rendered as lowercase hex only when written, so the hit path allocates nothing.
public struct TraceContext: Sendable, Equatable {
    public var traceHigh: UInt64
    public var traceLow: UInt64
    /// This hop's span: the access log's `span_id`, the parent of every upstream call.
    public var spanID: UInt64
    /// The caller's span (0 when the trace started here).
    public var parentID: UInt64
    public var flags: UInt8
    /// `tracestate` as received, only alongside a valid `traceparent`.
    public var state: String?

    /// Longest `tracestate` passed on (the specification's 512-character guidance).
    public static let maxStateLength = 512

    public init(traceHigh: UInt64, traceLow: UInt64, spanID: UInt64, parentID: UInt64 = 0, flags: UInt8 = 0, state: String? = nil) {
        self.traceHigh = traceHigh
        self.traceLow = traceLow
        self.spanID = spanID
        self.parentID = parentID
        self.flags = flags
        self.state = state
    }

    /// The incoming trace continued with a new span, or a new trace. `traceparent` is nil
    /// when absent or received more than once (invalid either way).
    public static func continuing(traceparent: String?, tracestate: String?, ids: inout TraceIDs) -> TraceContext {
        let span = ids.next()
        if let traceparent, var parsed = parse(traceparent[...]) {
            parsed.spanID = span
            if let tracestate, !tracestate.isEmpty, tracestate.utf8.count <= maxStateLength { parsed.state = tracestate }
            return parsed
        }
        return TraceContext(traceHigh: ids.next(), traceLow: ids.next(), spanID: span)
    }

    /// `version-traceid-parentid-flags`, lowercase hex. Version `ff` is invalid; version `00`
    /// is exactly 55 characters; a later version may be longer, with `-` after the flags.
    /// An all-zero trace or parent id is invalid.
    static func parse(_ text: Substring) -> TraceContext? {
        let b = Array(text.utf8)
        guard b.count >= 55, b[2] == 0x2D, b[35] == 0x2D, b[52] == 0x2D, let version = hex(b, 0, 2), version != 0xFF else { return nil }
        if version == 0 { guard b.count == 55 else { return nil } } else if b.count > 55 { guard b[55] == 0x2D else { return nil } }
        guard let high = hex(b, 3, 16), let low = hex(b, 19, 16), high | low != 0, let parent = hex(b, 36, 16), parent != 0, let flags = hex(b, 53, 2)
        else { return nil }
        return TraceContext(traceHigh: high, traceLow: low, spanID: 0, parentID: parent, flags: UInt8(truncatingIfNeeded: flags))
    }

    /// `count` (≤ 16) lowercase hex digits at `from`; uppercase is invalid (HEXDIGLC).
    private static func hex(_ b: [UInt8], _ from: Int, _ count: Int) -> UInt64? {
        var v: UInt64 = 0
        for i in from..<(from + count) {
            let c = b[i]
            let d: UInt64
            switch c {
            case 0x30...0x39: d = UInt64(c - 0x30)
            case 0x61...0x66: d = UInt64(c - 0x61 + 10)
            default: return nil
            }
            v = v << 4 | d
        }
        return v
    }

    /// The `traceparent` for a call made from this hop: same trace and flags, `span` as the parent.
    public func traceparent(parent span: UInt64) -> String {
        var out: [UInt8] = Array("00-".utf8)
        out.reserveCapacity(55)
        out.append(hex: traceHigh)
        out.append(hex: traceLow)
        out.append(0x2D)
        out.append(hex: span)
        out.append(0x2D)
        out.append(hex: UInt64(flags), digits: 2)
        return String(decoding: out, as: UTF8.self)
    }
}

/// Random non-zero 64-bit ids for traces and spans (wyrand: a few instructions each, no
/// lock): one per event loop, seeded from the system's generator.
public struct TraceIDs: Sendable {
    private var state: UInt64

    public init() { state = UInt64.random(in: 1...UInt64.max) }

    public mutating func next() -> UInt64 {
        while true {
            state &+= 0xA076_1D64_78BD_642F
            let m = state.multipliedFullWidth(by: state ^ 0xE703_7ED1_A0B4_28DB)
            let v = m.high ^ m.low
            if v != 0 { return v }
        }
    }
}
