import CSystem
import Glibc

/// gzip via zlib, for responses and pre-compressed cache entries.
public enum Gzip {
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? { compress(bytes[...], level: level) }

    /// A part of a larger buffer, compressed where it lies (no copy of it first).
    public static func compress(_ bytes: ArraySlice<UInt8>, level: Int32 = 6) -> [UInt8]? {
        var out: UnsafeMutablePointer<UInt8>?
        let n = bytes.withUnsafeBufferPointer { csys_gzip($0.baseAddress, $0.count, level, &out) }
        guard n >= 0, let out else { return nil }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: n))
    }

    public static func decompress(_ bytes: [UInt8], maxBytes: Int = 64 << 20) -> [UInt8]? {
        var out: UnsafeMutablePointer<UInt8>?
        let n = bytes.withUnsafeBufferPointer { csys_gunzip($0.baseAddress, $0.count, maxBytes, &out) }
        guard n >= 0, let out else { return nil }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: n))
    }
}
