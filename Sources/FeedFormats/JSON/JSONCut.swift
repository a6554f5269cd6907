/// A JSON document cut short (a file read up to a byte cap): the longest prefix that ends
/// right after a complete object or array inside it, closed with what was still open, so a
/// list of segments or chapters keeps every element that arrived whole.
public enum JSONCut {
    /// Deeper than this, the document is not worth closing (and the stack stays small).
    static let maxDepth = 64

    /// The closed prefix, or nil when no element inside the document arrived whole.
    public static func closed(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var stack: [UInt8] = []
        var inString = false, escaped = false
        var best: (end: Int, open: [UInt8])?
        for i in bytes.indices {
            let b = bytes[i]
            if inString {
                if escaped {
                    escaped = false
                } else if b == UInt8(ascii: "\\") {
                    escaped = true
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard stack.count < maxDepth else { return best.map { close($0, in: bytes) } }
                stack.append(b)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard let open = stack.popLast(), (open == UInt8(ascii: "{")) == (b == UInt8(ascii: "}")) else { return best.map { close($0, in: bytes) } }
                // A whole element inside something still open: a place the document can end.
                if !stack.isEmpty { best = (i + 1, stack) }
            default: break
            }
        }
        return best.map { close($0, in: bytes) }
    }

    private static func close(_ cut: (end: Int, open: [UInt8]), in bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out = Array(bytes[bytes.startIndex..<cut.end])
        for open in cut.open.reversed() { out.append(open == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) }
        return out
    }
}
