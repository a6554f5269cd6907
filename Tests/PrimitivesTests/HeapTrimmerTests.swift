import Foundation
import Glibc
import Testing
import TestSupport

@testable import Primitives

@Suite(.offPool) struct HeapTrimmerTests {
    /// Memory a burst freed below live allocations stays resident until a pass gives it back:
    /// 64 MB of 2 KB blocks written, all but every 64th freed (the kept ones hold the freed
    /// runs inside the arena, as a stream's state holds a burst's pages), and a pass takes
    /// most of it out of RSS. (Under TSan its own allocator serves malloc: nothing to trim.)
    @Test func aPassGivesBackWhatABurstFreedBelowLiveAllocations() {
        guard dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") == nil else { return }
        let count = 32_768, size = 2_048
        var blocks: [UnsafeMutableRawPointer] = []
        blocks.reserveCapacity(count)
        for _ in 0..<count {
            guard let p = malloc(size) else { break }
            memset(p, 0x5A, size)
            blocks.append(p)
        }
        for (i, p) in blocks.enumerated() where i % 64 != 63 { free(p) }
        let before = Self.residentBytes()
        #expect(HeapTrimmer.shared.trimNow())
        let after = Self.residentBytes()
        for (i, p) in blocks.enumerated() where i % 64 == 63 { free(p) }
        #expect(before - after >= 16 << 20, "RSS \(before) -> \(after)")
    }

    static func residentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}
