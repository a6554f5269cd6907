import Glibc

/// One finished span, as OpenTelemetry defines it: what the exporter sends. Times are Unix
/// nanoseconds (wall clock), ids the trace's numbers.
public struct Span: Sendable {
    public enum Kind: UInt8, Sendable {
        case `internal` = 1, server = 2, client = 3
    }

    public enum Value: Sendable, Equatable {
        case string(String), int(Int64), double(Double), bool(Bool)
    }

    public struct Link: Sendable, Equatable {
        public let traceHigh: UInt64
        public let traceLow: UInt64
        public let spanID: UInt64

        public init(_ trace: TraceContext) {
            traceHigh = trace.traceHigh
            traceLow = trace.traceLow
            spanID = trace.spanID
        }
    }

    /// The span's own trace, its `spanID` and its parent's (`parentID`, 0 for a root).
    public var trace: TraceContext
    public var name: String
    public var kind: Kind
    public var start: UInt64
    public var end: UInt64
    public var attributes: [(String, Value)]
    public var links: [Link] = []
    /// The span's error status message; nil: unset (not an error).
    public var error: String?

    public init(trace: TraceContext, name: String, kind: Kind, start: UInt64, end: UInt64, attributes: [(String, Value)] = [], error: String? = nil) {
        self.trace = trace
        self.name = name
        self.kind = kind
        self.start = start
        self.end = end
        self.attributes = attributes
        self.error = error
    }

    /// Now, in Unix nanoseconds.
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(max(ts.tv_sec, 0)) &* 1_000_000_000 &+ UInt64(max(ts.tv_nsec, 0))
    }

    /// `seconds` ago, in Unix nanoseconds (a duration measured on another clock).
    public static func ago(_ seconds: Double, from now: UInt64) -> UInt64 {
        let nanos = seconds.isFinite && seconds > 0 ? min(seconds * 1e9, Double(now)) : 0
        return now - UInt64(nanos)
    }
}
