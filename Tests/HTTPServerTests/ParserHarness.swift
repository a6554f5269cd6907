@testable import HTTPServer

/// Runs bytes through the head parser and body framing the way a connection does.
enum ParseOutcome: Equatable {
    case ok(method: String, target: String, body: String)
    case status(Int)
    case needMore
}

func parseAll(_ raw: String, limits: ParseLimits = ParseLimits(), feedBytewise: Bool = false) -> ParseOutcome {
    let bytes = Array(raw.utf8)
    var parser = RequestHeadParser(limits: limits)
    var head: RequestHead?
    var consumed = 0
    if feedBytewise {
        for end in 1...max(bytes.count, 1) {
            let result = bytes.withUnsafeBufferPointer { parser.parse(UnsafeBufferPointer(rebasing: $0[0..<min(end, bytes.count)])) }
            switch result {
            case .needMore: continue
            case .failure(let e): return .status(e.status)
            case .head(let h, let c): head = h; consumed = c
            }
            break
        }
    } else {
        switch bytes.withUnsafeBufferPointer({ parser.parse($0) }) {
        case .needMore: return .needMore
        case .failure(let e): return .status(e.status)
        case .head(let h, let c): head = h; consumed = c
        }
    }
    guard let h = head else { return .needMore }
    let rest = Array(bytes[consumed...])
    switch h.framing {
    case .none: break
    case .length(let n):
        guard rest.count >= n else { return .needMore }
        h.core.request.body = Array(rest[0..<n])
    case .chunked:
        var decoder = ChunkedDecoder(maxBody: limits.maxBodyBytes, maxTrailerBytes: limits.maxHeaderBytes)
        var body: [UInt8] = []
        let (_, outcome) = rest.withUnsafeBufferPointer { decoder.decode($0, into: &body) }
        switch outcome {
        case .needMore: return .needMore
        case .failure(let e): return .status(e.status)
        case .done: h.core.request.body = body
        }
    }
    return .ok(method: h.request.method, target: h.request.target, body: String(decoding: h.request.body, as: UTF8.self))
}
