import Foundation
import Glibc
import HTTPServer

public enum LogLevel: String, Sendable, Comparable {
    case debug, info, warn, error

    private var rank: Int {
        switch self {
        case .debug: return 0
        case .info: return 1
        case .warn: return 2
        case .error: return 3
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}

/// A value in a log line.
public enum LogValue: Sendable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
}

/// Structured logs: one JSON object per line on stdout, written off the calling thread.
public struct Logger: Sendable {
    public let level: LogLevel
    public let sink: LogSink

    public init(level: LogLevel, sink: LogSink = LogSink()) {
        self.level = level
        self.sink = sink
    }

    public func log(_ level: LogLevel, _ message: String, _ fields: [(String, LogValue)] = []) {
        guard level >= self.level else { return }
        var line = "{\"ts\":\"\(Self.timestamp())\",\"level\":\"\(level.rawValue)\",\"msg\":\(JSONString.quoted(message))"
        for (key, value) in fields {
            line += ",\(JSONString.quoted(key)):"
            switch value {
            case .string(let s): line += JSONString.quoted(s)
            case .int(let i): line += String(i)
            case .double(let d): line += d.isFinite ? String(format: "%.3f", d) : "null"
            case .bool(let b): line += b ? "true" : "false"
            }
        }
        line += "}\n"
        sink.enqueue(line)
    }

    public func info(_ message: String, _ fields: [(String, LogValue)] = []) { log(.info, message, fields) }
    public func warn(_ message: String, _ fields: [(String, LogValue)] = []) { log(.warn, message, fields) }
    public func error(_ message: String, _ fields: [(String, LogValue)] = []) { log(.error, message, fields) }

    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = ts.tv_sec
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, ts.tv_nsec / 1_000_000)
    }
}
