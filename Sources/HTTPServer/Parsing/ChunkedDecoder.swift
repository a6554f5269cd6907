import Primitives

/// Incremental decoder for `Transfer-Encoding: chunked` request bodies (RFC 9112 §7.1).
/// Strict: hex sizes only, CRLF everywhere, bounded size, extensions and trailers skipped
/// but bounded too (every byte of the framing counts against a limit, so a client cannot
/// keep the loop reading without end).
struct ChunkedDecoder {
    enum Outcome: Equatable {
        case needMore
        case done
        case failure(ClientError)
    }

    private enum State {
        case size(digits: Int)
        case extensionBytes
        case sizeLF
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailerLineStart
        case trailerLine
        case trailerLF(endsBody: Bool)
        case done
    }

    private var state = State.size(digits: 0)
    private var chunkSize = 0
    private var trailerBytes = 0
    private var lineExtensionBytes = 0
    private var extensionBytes = 0
    let maxBody: Int
    /// One chunk line's extension, and all of them in one body (RFC 9112 §7.1.1 defines
    /// none a server must read; real clients send none).
    static let maxLineExtensionBytes = 1024
    static let maxExtensionBytes = 16 * 1024
    let maxTrailerBytes: Int

    init(maxBody: Int, maxTrailerBytes: Int) {
        self.maxBody = maxBody
        self.maxTrailerBytes = maxTrailerBytes
    }

    /// Consumes bytes from `input`, appending chunk data to `body`; returns how many bytes it used.
    mutating func decode(_ input: UnsafeBufferPointer<UInt8>, into body: inout [UInt8]) -> (consumed: Int, outcome: Outcome) {
        var i = 0
        let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
        func fail(_ message: String) -> (Int, Outcome) { (i, .failure(.badRequest(message))) }
        while i < input.count {
            let b = input[i]
            switch state {
            case .size(let digits):
                if let v = PercentCoding.hexValue(b) {
                    guard digits < 15 else { return fail("invalid chunk size") }
                    chunkSize = chunkSize << 4 | Int(v)
                    state = .size(digits: digits + 1)
                } else if digits > 0 && b == UInt8(ascii: ";") {
                    lineExtensionBytes = 0
                    state = .extensionBytes
                } else if digits > 0 && b == cr {
                    state = .sizeLF
                } else {
                    return fail("invalid chunk size")
                }
                i += 1
            case .extensionBytes:
                lineExtensionBytes += 1
                extensionBytes += 1
                guard lineExtensionBytes <= Self.maxLineExtensionBytes, extensionBytes <= Self.maxExtensionBytes else {
                    return fail("chunk extension too long")
                }
                if b == cr { state = .sizeLF } else if b < 0x20 && b != 0x09 || b == 0x7F { return fail("invalid chunk extension") }
                i += 1
            case .sizeLF:
                guard b == lf else { return fail("invalid chunk size line") }
                i += 1
                if chunkSize == 0 {
                    state = .trailerLineStart
                } else {
                    guard body.count + chunkSize <= maxBody else { return (i, .failure(.bodyTooLarge)) }
                    state = .data(remaining: chunkSize)
                }
            case .data(let remaining):
                let n = min(remaining, input.count - i)
                body.append(contentsOf: UnsafeBufferPointer(rebasing: input[i..<(i + n)]))
                i += n
                state = remaining - n == 0 ? .dataCR : .data(remaining: remaining - n)
            case .dataCR:
                guard b == cr else { return fail("chunk data not followed by CRLF") }
                state = .dataLF
                i += 1
            case .dataLF:
                guard b == lf else { return fail("chunk data not followed by CRLF") }
                chunkSize = 0
                state = .size(digits: 0)
                i += 1
            case .trailerLineStart:
                if b == cr { state = .trailerLF(endsBody: true) } else { state = .trailerLine; continue }
                i += 1
            case .trailerLine:
                trailerBytes += 1
                if trailerBytes > maxTrailerBytes { return (i, .failure(.headersTooLarge)) }
                if b == cr { state = .trailerLF(endsBody: false) } else if b < 0x20 && b != 0x09 { return fail("invalid trailer") }
                i += 1
            case .trailerLF(let endsBody):
                guard b == lf else { return fail("invalid trailer line") }
                i += 1
                if endsBody {
                    state = .done
                    return (i, .done)
                }
                state = .trailerLineStart
            case .done:
                return (i, .done)
            }
        }
        if case .done = state { return (i, .done) }
        return (i, .needMore)
    }
}
