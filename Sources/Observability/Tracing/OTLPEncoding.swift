import Primitives

/// Spans as an OTLP `ExportTraceServiceRequest` in protobuf (opentelemetry-proto's
/// collector/trace/v1): the one body every collector accepts over OTLP/HTTP.
package enum OTLPEncoding {
    /// One resource (this process) and one instrumentation scope (FeedProxy).
    package static func request(_ spans: [Span], resource: [(String, Span.Value)], scopeVersion: String) -> [UInt8] {
        var out = ProtoWriter()
        out.message(1) { resourceSpans in
            resourceSpans.message(1) { r in
                for (key, value) in resource { r.message(1) { $0.keyValue(key, value) } }
            }
            resourceSpans.message(2) { scopeSpans in
                scopeSpans.message(1) { scope in
                    scope.string(1, "feedproxy")
                    scope.string(2, scopeVersion)
                }
                for span in spans { scopeSpans.message(2) { $0.span(span) } }
            }
        }
        return out.bytes
    }
}

/// The protobuf wire format, as much as OTLP needs: varints, fixed64/32, length-delimited.
package struct ProtoWriter {
    package var bytes: [UInt8] = []

    package mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    package mutating func tag(_ field: Int, _ wireType: UInt64) { varint(UInt64(field) << 3 | wireType) }

    package mutating func uint(_ field: Int, _ value: UInt64) {
        tag(field, 0)
        varint(value)
    }

    package mutating func fixed64(_ field: Int, _ value: UInt64) {
        tag(field, 1)
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    package mutating func fixed32(_ field: Int, _ value: UInt32) {
        tag(field, 5)
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }

    package mutating func data(_ field: Int, _ value: some Collection<UInt8>) {
        tag(field, 2)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    package mutating func string(_ field: Int, _ value: String) { data(field, value.utf8) }

    /// An embedded message: written into its own buffer, then length-prefixed.
    package mutating func message(_ field: Int, _ body: (inout ProtoWriter) -> Void) {
        var inner = ProtoWriter()
        body(&inner)
        data(field, inner.bytes)
    }

    package static func id(_ values: UInt64...) -> [UInt8] {
        var out: [UInt8] = []
        for v in values { for i in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        return out
    }

    /// `KeyValue { key = 1; AnyValue value = 2 }`, `AnyValue` a string, bool, int64 or double.
    package mutating func keyValue(_ key: String, _ value: Span.Value) {
        string(1, key)
        message(2) { any in
            switch value {
            case .string(let s): any.string(1, s)
            case .bool(let b): any.uint(2, b ? 1 : 0)
            case .int(let i): any.uint(3, UInt64(bitPattern: i))
            case .double(let d): any.fixed64(4, d.bitPattern)
            }
        }
    }

    /// `Span`, field by field as trace.proto numbers them.
    package mutating func span(_ s: Span) {
        data(1, Self.id(s.trace.traceHigh, s.trace.traceLow))
        data(2, Self.id(s.trace.spanID))
        if let state = s.trace.state { string(3, state) }
        if s.trace.parentID != 0 { data(4, Self.id(s.trace.parentID)) }
        string(5, s.name)
        uint(6, UInt64(s.kind.rawValue))
        fixed64(7, s.start)
        fixed64(8, max(s.end, s.start))
        for (key, value) in s.attributes { message(9) { $0.keyValue(key, value) } }
        for link in s.links {
            message(13) { l in
                l.data(1, Self.id(link.traceHigh, link.traceLow))
                l.data(2, Self.id(link.spanID))
            }
        }
        message(15) { status in
            if let error = s.error {
                status.string(2, error)
                status.uint(3, 2)  // STATUS_CODE_ERROR
            }
        }
        // W3C flags, and whether the parent is remote (a server span continuing a caller).
        let remote: UInt32 = s.kind == .server && s.trace.parentID != 0 ? 0x300 : 0x100
        fixed32(16, UInt32(s.trace.flags) | remote)
    }
}
