import Primitives
import TestSupport
import Testing

/// (`#expect` cannot take a non-copyable value apart, so each check reads into a local first.)
@Suite(.offPool) struct ByteBufferTests {
    @Test func anEmptyBufferOwnsNoMemory() {
        let buffer = ByteBuffer()
        let (capacity, empty, bytes) = (buffer.capacity, buffer.isEmpty, buffer.array)
        let viewed = buffer.withUnsafeBytes { $0.count }
        #expect(capacity == 0 && empty && bytes.isEmpty && viewed == 0)
    }

    /// Bytes, runs, strings, literals and numbers in any mix come out as an array would hold
    /// them, across many reallocations.
    @Test func appendsMatchAnArrayAcrossGrowth() {
        var buffer = ByteBuffer()
        var expected: [UInt8] = []
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for i in 0..<5_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            switch seed >> 61 {
            case 0, 1:
                buffer.append(UInt8(truncatingIfNeeded: i))
                expected.append(UInt8(truncatingIfNeeded: i))
            case 2, 3:
                let run = [UInt8](repeating: UInt8(truncatingIfNeeded: seed >> 8), count: Int(seed >> 40 & 0x3FF))
                buffer.append(contentsOf: run)
                expected += run
            case 4:
                let text = "é-\(i)-" + String(repeating: "z", count: Int(seed >> 50 & 0x3F))
                buffer.append(utf8: text)
                expected += Array(text.utf8)
            case 5:
                let n = UInt(truncatingIfNeeded: seed >> Int(seed & 63))
                buffer.append(decimal: n)
                expected += Array(String(n).utf8)
            default:
                buffer.append(literal: "Content-Length: ")
                expected += Array("Content-Length: ".utf8)
            }
        }
        let (count, bytes, capacity) = (buffer.count, buffer.array, buffer.capacity)
        #expect(count == expected.count)
        #expect(bytes == expected)
        #expect(capacity >= count)
    }

    @Test func removeAllKeepsOrReleasesTheAllocation() {
        var buffer = ByteBuffer()
        buffer.append(contentsOf: [UInt8](repeating: 7, count: 1000))
        let grown = buffer.capacity
        buffer.removeAll(keepingCapacity: true)
        let (kept, emptied) = (buffer.capacity, buffer.isEmpty)
        #expect(kept == grown && emptied)
        buffer.append(1)
        let one = buffer.array
        #expect(one == [1])
        buffer.removeAll(keepingCapacity: false)
        let released = buffer.capacity
        #expect(released == 0)
        buffer.reserveCapacity(5000)
        let (reserved, stillEmpty) = (buffer.capacity, buffer.isEmpty)
        #expect(reserved >= 5000 && stillEmpty)
    }
}
