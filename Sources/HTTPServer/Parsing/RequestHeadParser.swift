import Glibc
import Primitives

/// How the body of a request is delimited (RFC 9112 §6).
enum BodyFraming: Equatable {
    case none
    case length(Int)
    case chunked
}

/// A request head that passed every check (already what the server knows of the request, which it
/// server fills in at dispatch), plus what framing needs.
struct RequestHead {
    var core: CoreRequestContext
    var framing: BodyFraming
    var keepAlive: Bool
    var expectContinue: Bool

    /// Lends the body buffer for appending in place (no copy out and back per read).
    mutating func appendingBody<R>(_ append: (inout [UInt8]) -> R) -> R { append(&core.request.body) }

    var request: Request { core.request }
}

enum HeadParseResult {
    case needMore
    case head(RequestHead, consumed: Int)
    case failure(ClientError)
}

/// Strict parser for the request line and header section (RFC 9112 §2–§6).
/// Incremental: call again with more bytes until it stops answering `.needMore`;
/// `scanned` remembers how far the end-of-head search got, so trickled bytes cost O(n).
struct RequestHeadParser {
    let limits: ParseLimits
    private(set) var scanned = 0

    init(limits: ParseLimits) {
        self.limits = limits
    }

    mutating func reset() { scanned = 0 }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")

    mutating func parse(_ buf: UnsafeBufferPointer<UInt8>) -> HeadParseResult {
        let count = buf.count
        // RFC 9112 §2.2: ignore empty lines before the request line.
        var start = 0
        while start + 1 < count, buf[start] == Self.cr, buf[start + 1] == Self.lf, start < 8 { start += 2 }
        if start >= count || (start + 1 == count && buf[start] == Self.cr) { return .needMore }

        // Line by line with memchr (vectorised), not byte by byte: every LF must follow a CR,
        // and no other CR may appear (one at the very end may still get its LF).
        var lineEnd = -1
        var headEnd = -1
        var i = max(scanned, start)
        while i < count {
            guard let lf = Self.find(Self.lf, buf, from: i, to: count) else {
                if let c = Self.find(Self.cr, buf, from: i, to: count), c < count - 1 { return .failure(.badRequest("bare CR in request head")) }
                break
            }
            guard lf > start, buf[lf - 1] == Self.cr else { return .failure(.badRequest("line not terminated by CRLF")) }
            if Self.find(Self.cr, buf, from: i, to: lf - 1) != nil { return .failure(.badRequest("bare CR in request head")) }
            if lf - start >= 3, buf[lf - 2] == Self.lf, buf[lf - 3] == Self.cr {
                headEnd = lf + 1
                break
            }
            i = lf + 1
        }
        // The request line ends at the first LF (the search above may have resumed past it).
        lineEnd = Self.firstLF(buf, from: start, to: min(count, start + limits.maxRequestLineBytes + 2))
        if headEnd < 0 {
            scanned = max(start, count - 3)
            if lineEnd < 0 {
                return count - start > limits.maxRequestLineBytes ? .failure(.uriTooLong) : .needMore
            }
            if lineEnd - start > limits.maxRequestLineBytes { return .failure(.uriTooLong) }
            if count - lineEnd > limits.maxHeaderBytes { return .failure(.headersTooLarge) }
            return .needMore
        }
        if lineEnd < 0 || lineEnd - start > limits.maxRequestLineBytes { return .failure(.uriTooLong) }
        guard lineEnd > start, buf[lineEnd - 1] == Self.cr else { return .failure(.badRequest("malformed request line")) }
        if headEnd - lineEnd > limits.maxHeaderBytes { return .failure(.headersTooLarge) }
        scanned = 0
        switch Self.parseComplete(buf, start: start, lineEnd: lineEnd, headEnd: headEnd, limits: limits) {
        case .success(let head): return .head(head, consumed: headEnd)
        case .failure(let error): return .failure(error)
        }
    }

    private static func firstLF(_ buf: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int {
        find(lf, buf, from: from, to: to) ?? -1
    }

    /// The first index of `byte` in `buf[from..<to]` (memchr), nil when absent or the range is empty.
    private static func find(_ byte: UInt8, _ buf: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, from >= 0, to <= buf.count, let base = buf.baseAddress else { return nil }
        guard let hit = memchr(base + from, Int32(byte), to - from) else { return nil }
        return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
    }

    /// Parses a complete head: `buf[start..<headEnd]`, request line ending at `lineEnd` (the LF).
    private static func parseComplete(_ buf: UnsafeBufferPointer<UInt8>, start: Int, lineEnd: Int, headEnd: Int, limits: ParseLimits) -> Result<
        RequestHead, ClientError
    > {
        let line = UnsafeBufferPointer(rebasing: buf[start..<(lineEnd - 1)])
        let method: String, target: String, version: HTTPVersion
        switch parseRequestLine(line) {
        case .success(let parts): (method, target, version) = parts
        case .failure(let e): return .failure(e)
        }

        // Field lines are validated into a table on the stack (up to 64 fields: the 1 KiB that
        // stays off the heap), then the table and the header section's bytes become the
        // request's one `RequestHeaders` buffer. Past 64 fields (a raised limit), a heap table.
        let section = UnsafeBufferPointer(rebasing: buf[(lineEnd + 1)..<(headEnd - 2)])  // without the final empty line
        var fields = withUnsafeTemporaryAllocation(of: FieldRange.self, capacity: 1024 / MemoryLayout<FieldRange>.stride) { table in
            parseFields(section, into: table, limits: limits)
        }
        if case .tableFull = fields {
            var table = [FieldRange](repeating: FieldRange(nameStart: 0, nameEnd: 0, valueStart: 0, valueEnd: 0), count: limits.maxHeaderCount)
            fields = table.withUnsafeMutableBufferPointer { parseFields(section, into: $0, limits: limits) }
        }
        switch fields {
        case .headers(let headers): return interpret(method: method, target: target, version: version, headers: headers, limits: limits)
        case .tableFull: return .failure(.headersTooLarge)
        case .failure(let e): return .failure(e)
        }
    }

    private enum ParsedFields {
        case headers(RequestHeaders)
        case tableFull
        case failure(ClientError)
    }

    /// The field lines of `section` (each ending in CRLF) validated into `table`.
    private static func parseFields(_ section: UnsafeBufferPointer<UInt8>, into table: UnsafeMutableBufferPointer<FieldRange>, limits: ParseLimits)
        -> ParsedFields
    {
        var count = 0
        var pos = 0
        while pos < section.count {
            if count >= limits.maxHeaderCount { return .failure(.headersTooLarge) }
            guard count < table.count else { return .tableFull }
            guard let eol = find(lf, section, from: pos, to: section.count), eol > pos else {
                return .failure(.badRequest("line not terminated by CRLF"))
            }
            switch parseField(section, from: pos, to: eol - 1) {
            case .success(let field): table[count] = field
            case .failure(let e): return .failure(e)
            }
            count += 1
            pos = eol + 1
        }
        return .headers(RequestHeaders(text: section, ranges: UnsafeBufferPointer(rebasing: table[0..<count])))
    }

    private static func parseRequestLine(_ line: UnsafeBufferPointer<UInt8>) -> Result<(String, String, HTTPVersion), ClientError> {
        let sp = UInt8(ascii: " ")
        guard let firstSpace = line.firstIndex(of: sp), firstSpace > 0 else { return .failure(.badRequest("malformed request line")) }
        guard let lastSpace = line.lastIndex(of: sp), lastSpace > firstSpace + 1 else { return .failure(.badRequest("malformed request line")) }
        for i in 0..<firstSpace where !ASCII.isTokenChar(line[i]) { return .failure(.badRequest("invalid method")) }
        for i in (firstSpace + 1)..<lastSpace {
            let b = line[i]
            if b <= 0x20 || b >= 0x7F || b == UInt8(ascii: "#") { return .failure(.badRequest("invalid request target")) }
        }
        let versionBytes = UnsafeBufferPointer(rebasing: line[(lastSpace + 1)...])
        guard versionBytes.count == 8, versionBytes[0] == UInt8(ascii: "H"), versionBytes[1] == UInt8(ascii: "T"),
            versionBytes[2] == UInt8(ascii: "T"), versionBytes[3] == UInt8(ascii: "P"), versionBytes[4] == UInt8(ascii: "/"),
            versionBytes[6] == UInt8(ascii: "."),
            (48...57).contains(versionBytes[5]), (48...57).contains(versionBytes[7])
        else { return .failure(.badRequest("malformed HTTP version")) }
        let version: HTTPVersion
        switch (versionBytes[5], versionBytes[7]) {
        case (49, 49): version = .http11
        case (49, 48): version = .http10
        default: return .failure(.versionNotSupported)
        }
        let methodBytes = UnsafeBufferPointer(rebasing: line[0..<firstSpace])
        let method = knownMethod(methodBytes) ?? String(decoding: methodBytes, as: UTF8.self)
        let rawTarget = UnsafeBufferPointer(rebasing: line[(firstSpace + 1)..<lastSpace])
        // Escapes are checked on the bytes as sent (an absolute-form's authority included).
        guard PercentCoding.hasValidEscapes(rawTarget) else { return .failure(.badRequest("invalid percent-encoding in request target")) }
        guard let target = normalizeTarget(rawTarget, method: method) else { return .failure(.badRequest("invalid request target")) }
        return .success((method, target, version))
    }

    /// The common methods as literals: no UTF-8 validation and no new string per request
    /// (about a hundred instructions each time for "GET").
    private static func knownMethod(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        switch bytes.count {
        case 3 where bytes[0] == UInt8(ascii: "G") && bytes[1] == UInt8(ascii: "E") && bytes[2] == UInt8(ascii: "T"): return "GET"
        case 4 where bytes[0] == UInt8(ascii: "H") && bytes[1] == UInt8(ascii: "E") && bytes[2] == UInt8(ascii: "A") && bytes[3] == UInt8(ascii: "D"):
            return "HEAD"
        case 4 where bytes[0] == UInt8(ascii: "P") && bytes[1] == UInt8(ascii: "O") && bytes[2] == UInt8(ascii: "S") && bytes[3] == UInt8(ascii: "T"):
            return "POST"
        default: return nil
        }
    }

    /// Origin-form as is; absolute-form reduced to its path and query; `*` only for OPTIONS.
    private static func normalizeTarget(_ raw: UnsafeBufferPointer<UInt8>, method: String) -> String? {
        // Origin-form, nearly every request: bytes already checked to be visible ASCII.
        if raw.first == UInt8(ascii: "/") {
            return String(unsafeUninitializedCapacity: raw.count) {
                UnsafeMutableRawBufferPointer($0).copyMemory(from: UnsafeRawBufferPointer(raw)); return raw.count
            }
        }
        let s = String(decoding: raw, as: UTF8.self)
        if s == "*" { return method == "OPTIONS" ? s : nil }
        let lower = s.lowercased()
        for scheme in ["http://", "https://"] where lower.hasPrefix(scheme) {
            let rest = s.dropFirst(scheme.count)
            guard let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
            guard authorityEnd > rest.startIndex else { return nil }
            let tail = rest[authorityEnd...]
            return tail.hasPrefix("?") ? "/" + tail : String(tail)
        }
        return nil
    }

    /// Validates the field line `section[from..<to]` (without its CRLF); returns where its
    /// name and value (OWS trimmed) lie in `section`. Called for every field of every request:
    /// the name is read once (it ends at the first non-`tchar`, which must be the colon), the
    /// value checked eight bytes at a time.
    private static func parseField(_ section: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Result<FieldRange, ClientError> {
        guard from < to else { return .failure(.badRequest("empty header line")) }
        let first = section[from]
        if first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { return .failure(.badRequest("obsolete line folding is not allowed")) }
        var colon = from
        while colon < to, ASCII.isTokenChar(section[colon]) { colon += 1 }
        guard colon < to, section[colon] == UInt8(ascii: ":") else {
            let hasColon = find(UInt8(ascii: ":"), section, from: colon, to: to) != nil
            return .failure(.badRequest(hasColon ? "invalid character in header name" : "header field without colon"))
        }
        guard colon > from else { return .failure(.badRequest("empty header name")) }
        var vStart = colon + 1
        var vEnd = to
        guard valueBytesAreValid(section, from: vStart, to: vEnd) else { return .failure(.badRequest("invalid character in header value")) }
        while vStart < vEnd, section[vStart] == 0x20 || section[vStart] == 0x09 { vStart += 1 }
        while vEnd > vStart, section[vEnd - 1] == 0x20 || section[vEnd - 1] == 0x09 { vEnd -= 1 }
        // Offsets within a head of at most maxHeaderBytes (32 KiB by default): they fit.
        return .success(
            FieldRange(
                nameStart: UInt32(truncatingIfNeeded: from), nameEnd: UInt32(truncatingIfNeeded: colon),
                valueStart: UInt32(truncatingIfNeeded: vStart), valueEnd: UInt32(truncatingIfNeeded: vEnd)))
    }

    /// RFC 9110 §5.5: no control characters in a value but HTAB, and no DEL (obs-text, 0x80
    /// and up, is allowed). Words without a byte below 0x20 or a DEL pass at once; a word with
    /// one (a tab, say) is looked at byte by byte.
    private static func valueBytesAreValid(_ section: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Bool {
        guard from < to, let base = section.baseAddress else { return true }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        var i = from
        while to - i >= 8 {
            let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            let d = w ^ (0x7F &* ones)
            if ((w &- 0x20 &* ones) & ~w | (d &- ones) & ~d) & highs != 0 { break }
            i += 8
        }
        while i < to {
            let b = section[i]
            if (b < 0x20 && b != 0x09) || b == 0x7F { return false }
            i += 1
        }
        return true
    }

    /// Header semantics: Host, framing (smuggling defences), Connection, Expect.
    private static func interpret(method: String, target: String, version: HTTPVersion, headers: RequestHeaders, limits: ParseLimits) -> Result<
        RequestHead, ClientError
    > {
        // One pass over the fields for everything framing and routing need (no per-name scans);
        // only Host is on nearly every request, and it is checked as bytes.
        var hostIndex: Int?
        var hostCount = 0
        var lengths: [String] = [], encodings: [String] = [], connection: [String] = []
        var expect: String?
        for i in 0..<headers.count {
            switch headers.knownField(at: i) {
            case .host:
                hostCount += 1
                hostIndex = i
            case .contentLength: lengths.append(headers.value(at: i))
            case .transferEncoding: encodings.append(headers.value(at: i))
            case .connection: connection.append(headers.value(at: i))
            case .expect: if expect == nil { expect = headers.value(at: i) }
            case nil: break
            }
        }
        if version == .http11 && hostCount != 1 { return .failure(.badRequest(hostCount == 0 ? "missing Host header" : "multiple Host headers")) }
        if hostCount > 1 { return .failure(.badRequest("multiple Host headers")) }
        if let hostIndex, !headers.withValue(at: hostIndex, HostField.isValid) { return .failure(.badRequest("invalid Host header")) }

        var framing = BodyFraming.none
        if !encodings.isEmpty {
            if !lengths.isEmpty { return .failure(.badRequest("both Content-Length and Transfer-Encoding")) }
            if version == .http10 { return .failure(.badRequest("Transfer-Encoding in an HTTP/1.0 request")) }
            let codings = encodings.flatMap { $0.split(separator: ",") }.map { $0.trimmingASCIIWhitespace().lowercased() }
            guard codings.last == "chunked", codings.filter({ $0 == "chunked" }).count == 1 else {
                return .failure(.badRequest("chunked must be the final transfer coding"))
            }
            if codings.count > 1 { return .failure(ClientError(status: 501, code: "not_implemented", message: "unsupported transfer coding")) }
            framing = .chunked
        } else if !lengths.isEmpty {
            var value: Int?
            for part in lengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
                let digits = part.trimmingASCIIWhitespace()
                guard !digits.isEmpty, digits.count <= 18, digits.utf8.allSatisfy({ (48...57).contains($0) }), let n = Int(digits) else {
                    return .failure(.badRequest("invalid Content-Length"))
                }
                if let v = value, v != n { return .failure(.badRequest("conflicting Content-Length values")) }
                value = n
            }
            if let n = value {
                if n > limits.maxBodyBytes { return .failure(.bodyTooLarge) }
                framing = n > 0 ? .length(n) : .none
            }
        }

        var keepAlive = version == .http11
        for token in connection.flatMap({ $0.split(separator: ",") }) {
            let t = token.trimmingASCIIWhitespace().lowercased()
            if t == "close" { keepAlive = false; break }
            if t == "keep-alive" { keepAlive = true }
        }

        var expectContinue = false
        if let expect {
            guard expect.lowercased() == "100-continue" else {
                return .failure(ClientError(status: 417, code: "expectation_failed", message: "unsupported Expect value"))
            }
            expectContinue = version == .http11 && framing != .none
        }
        let request = Request(method: method, target: target, version: version, headers: headers)
        return .success(RequestHead(core: CoreRequestContext(request: request), framing: framing, keepAlive: keepAlive, expectContinue: expectContinue))
    }
}
