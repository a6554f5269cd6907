public enum LogLevel: String, Sendable, Comparable {
    case debug, info, warn, error

    @usableFromInline var rank: Int {
        switch self {
        case .debug: return 0
        case .info: return 1
        case .warn: return 2
        case .error: return 3
        }
    }

    @inlinable public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}

/// A value in a log line.
public enum LogValue: Sendable {
    case string(String)
    case int(Int)
    /// Written with three decimals (durations in milliseconds).
    case double(Double)
    case bool(Bool)
}

/// Structured logs: one JSON object per line on stdout, buffered by `LogSink`.
public struct Logger: Sendable {
    public let level: LogLevel
    public let sink: LogSink

    public init(level: LogLevel, sink: LogSink = LogSink()) {
        self.level = level
        self.sink = sink
    }

    public func log(_ level: LogLevel, _ message: String, _ fields: [(String, LogValue)] = []) {
        guard level >= self.level else { return }
        sink.write(lane: sink.sharedLane, level: level) { out in
            LogLine.appendString(message, into: &out)
            for (key, value) in fields {
                LogLine.appendKey(key, into: &out)
                LogLine.appendValue(value, into: &out)
            }
        }
    }

    public func info(_ message: String, _ fields: [(String, LogValue)] = []) { log(.info, message, fields) }
    public func warn(_ message: String, _ fields: [(String, LogValue)] = []) { log(.warn, message, fields) }
    public func error(_ message: String, _ fields: [(String, LogValue)] = []) { log(.error, message, fields) }
}
