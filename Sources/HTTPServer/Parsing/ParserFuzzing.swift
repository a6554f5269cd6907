/// Drives the request parser over arbitrary bytes the way a connection does
/// (whole, and split at a point chosen by the input), for `make fuzz`. It must never trap;
/// a broken property is reported, and the fuzzer decides what a finding is.
public enum ParserFuzzing {
    /// A description of a property the parser broke, or nil.
    public static func run(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard !bytes.isEmpty else { return nil }
        let split = Int(bytes[0]) % bytes.count
        return parseStream(UnsafeBufferPointer(rebasing: bytes[1...]), splitAt: split).finding
    }

    static func parseStream(_ bytes: UnsafeBufferPointer<UInt8>, splitAt split: Int) -> (requests: Int, finding: String?) {
        var limits = ParseLimits()
        limits.maxBodyBytes = 64 * 1024
        var parser = RequestHeadParser(limits: limits)
        var offset = 0
        var requests = 0
        var visible = min(max(split, 1), bytes.count)
        while offset < bytes.count {
            let window = UnsafeBufferPointer(rebasing: bytes[offset..<visible])
            switch parser.parse(window) {
            case .needMore:
                if visible == bytes.count { return (requests, nil) }
                visible = bytes.count
                continue
            case .failure:
                return (requests, nil)
            case .head(let head, let consumed):
                parser.reset()
                offset += consumed
                requests += 1
                _ = head.request.queryItems
                _ = head.request.acceptsGzip
                // Every field as the handlers read them: iterated, looked up, repeated names.
                let headers = head.request.headers
                var seen = 0
                for field in headers { seen &+= field.name.utf8.count &+ field.value.utf8.count }
                _ = (headers["host"], headers.single("traceparent"), headers.values("x-forwarded-for"), headers.contains("if-none-match"), seen)
                switch head.framing {
                case .none:
                    break
                case .length(let n):
                    guard offset + n <= bytes.count else { return (requests, nil) }
                    offset += n
                case .chunked:
                    let rest = UnsafeBufferPointer(rebasing: bytes[offset...])
                    var decoder = ChunkedDecoder(maxBody: limits.maxBodyBytes, maxTrailerBytes: limits.maxHeaderBytes)
                    let (used, outcome) = decoder.decode(rest, into: &head.core.request.body)
                    // The same body in reads of an input-chosen size, as a trickling client
                    // sends it, must decode to the same bytes and the same verdict.
                    let (piecewiseUsed, piecewise, body) = decodeInPieces(rest, step: split % 13 + 1, limits: limits)
                    guard piecewise == outcome, piecewiseUsed == used, body == head.request.body else {
                        return (requests, "chunked decoding depends on how the body was split (reads of \(split % 13 + 1) bytes)")
                    }
                    guard outcome == .done else { return (requests, nil) }
                    offset += used
                }
                visible = max(visible, offset)
            }
        }
        return (requests, nil)
    }

    /// Feeds `bytes` to a fresh decoder `step` bytes at a time, as a connection's reads would.
    static func decodeInPieces(_ bytes: UnsafeBufferPointer<UInt8>, step: Int, limits: ParseLimits) -> (Int, ChunkedDecoder.Outcome, [UInt8]) {
        var decoder = ChunkedDecoder(maxBody: limits.maxBodyBytes, maxTrailerBytes: limits.maxHeaderBytes)
        var body: [UInt8] = []
        var offset = 0
        while true {
            let end = min(offset + step, bytes.count)
            let (used, outcome) = decoder.decode(UnsafeBufferPointer(rebasing: bytes[offset..<end]), into: &body)
            offset += used
            if outcome != .needMore || end == bytes.count { return (offset, outcome, body) }
        }
    }
}
