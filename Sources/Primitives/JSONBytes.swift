/// JSON string literals written straight into a byte buffer: the response encoder and
/// the access log both use it.
public enum JSONBytes {
    public static func appendQuoted(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { utf8 in
            out.append(UInt8(ascii: "\""))
            var runStart = 0
            for (i, b) in utf8.enumerated() where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
                runStart = i + 1
                out.append(UInt8(ascii: "\\"))
                switch b {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(b)
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    out.append(contentsOf: "u00".utf8)
                    out.append(hexDigit(b >> 4))
                    out.append(hexDigit(b & 0xF))
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
            out.append(UInt8(ascii: "\""))
        }
    }

    private static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 48 + v : 87 + v }
}
