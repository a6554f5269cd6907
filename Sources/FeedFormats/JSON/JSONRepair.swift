/// Repairs for upstream JSON that is not quite JSON.
public enum JSONRepair {
    /// Strips a JSONP wrapper such as `jsonFeed({...})`, or `({...})` when the
    /// callback name is empty (and surrounding whitespace or a trailing `;`), returning the inner bytes.
    public static func stripJSONP(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        var start = 0
        var end = bytes.count
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) || bytes[end - 1] == UInt8(ascii: ";") { end -= 1 }
        // `/**/cb(...)`: some JSONP servers prefix a comment (a guard against content sniffing).
        if end - start >= 4, bytes[start] == UInt8(ascii: "/"), bytes[start + 1] == UInt8(ascii: "*") {
            var k = start + 2
            while k + 1 < end, !(bytes[k] == UInt8(ascii: "*") && bytes[k + 1] == UInt8(ascii: "/")) { k += 1 }
            if k + 1 < end { start = k + 2 }
            while start < end, isSpace(bytes[start]) { start += 1 }
        }
        guard start < end, bytes[start] != UInt8(ascii: "{"), bytes[start] != UInt8(ascii: "[") else { return bytes[start..<end] }
        // identifier( ... )
        var i = start
        while i < end,
            bytes[i] == UInt8(ascii: "_") || bytes[i] == UInt8(ascii: "$") || bytes[i] == UInt8(ascii: ".")
                || (65...90).contains(bytes[i]) || (97...122).contains(bytes[i]) || (48...57).contains(bytes[i])
        { i += 1 }
        while i < end, isSpace(bytes[i]) { i += 1 }
        guard i < end - 1, bytes[i] == UInt8(ascii: "("), bytes[end - 1] == UInt8(ascii: ")") else { return bytes[start..<end] }
        return bytes[(i + 1)..<(end - 1)]
    }

    /// Replaces the invalid escape `\'` inside strings with `'` (a photo feed emits it);
    /// every valid escape, including `\\`, is left alone.
    public static func fixInvalidEscapes<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var inString = false
        var escaped = false
        for b in bytes {
            if escaped {
                escaped = false
                if b == UInt8(ascii: "'") {
                    out.removeLast()  // drop the backslash
                }
                out.append(b)
                continue
            }
            if inString && b == UInt8(ascii: "\\") {
                escaped = true
            } else if b == UInt8(ascii: "\"") {
                inString.toggle()
            }
            out.append(b)
        }
        return out
    }
}
