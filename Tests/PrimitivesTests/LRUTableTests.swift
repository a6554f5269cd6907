import Testing
import TestSupport
@testable import Primitives

@Suite(.offPool) struct LRUTableTests {
    @Test func evictsInUseOrderAndReusesSlots() {
        var t = LRUTable<String, Int>()
        for i in 0..<5 { t.set("k\(i)", i) }
        _ = t.touch("k0")
        #expect(t.peek("k1") == 1)  // peek does not count as a use
        #expect(t.removeOldest()?.key == "k1")
        #expect(t.removeOldest()?.key == "k2")
        #expect(t.set("k3", 33) == 3)  // replace = use
        #expect(t.removeOldest()?.key == "k4")
        #expect(t.removeOldest()?.key == "k0")
        #expect(t.removeOldest()?.key == "k3")
        #expect(t.removeOldest() == nil)
        #expect(t.count == 0)
        t.set("again", 1)
        #expect(t.touch("again") == 1)
        #expect(t.removeValue(forKey: "again") == 1)
        #expect(t.removeValue(forKey: "again") == nil)
    }

    /// A kept slot answers only while it still holds its key: after eviction and reuse by
    /// another key it says nil, and the key is found again by lookup.
    @Test func touchBySlotChecksTheKey() throws {
        var t = LRUTable<String, Int>()
        t.set("a", 1)
        t.set("b", 2)
        let slot = try #require(t.slot(of: "a"))
        #expect(t.touch("a", at: slot) == 1)
        #expect(t.removeOldest()?.key == "b")  // the touch made "a" the newest
        #expect(t.touch("b", at: slot) == nil)
        t.removeValue(forKey: "a")
        t.set("c", 3)  // reuses a freed slot
        #expect(t.touch("a", at: slot) == nil)
        #expect(t.touch("a", at: -1) == nil)
        #expect(t.touch("a", at: 1 << 40) == nil)
        let moved = try #require(t.slot(of: "c"))
        #expect(t.touch("c", at: moved) == 3)
    }

    /// Random operations checked against a plain array kept in use order.
    @Test func matchesAReferenceModel() {
        var t = LRUTable<String, Int>()
        var model: [(String, Int)] = []  // oldest first
        var rng = SplitMix(seed: 42)
        for step in 0..<20_000 {
            let key = "k\(rng.next() % 64)"
            switch rng.next() % 4 {
            case 0:
                t.set(key, step)
                model.removeAll { $0.0 == key }
                model.append((key, step))
            case 1:
                let got = t.touch(key)
                if let i = model.firstIndex(where: { $0.0 == key }) {
                    let e = model.remove(at: i)
                    model.append(e)
                    #expect(got == e.1)
                } else {
                    #expect(got == nil)
                }
            case 2:
                let got = t.removeValue(forKey: key)
                let i = model.firstIndex { $0.0 == key }
                #expect(got == i.map { model[$0].1 })
                if let i { model.remove(at: i) }
            default:
                let got = t.removeOldest()
                #expect(got?.key == model.first?.0)
                if !model.isEmpty { model.removeFirst() }
            }
            #expect(t.count == model.count)
        }
    }
}
