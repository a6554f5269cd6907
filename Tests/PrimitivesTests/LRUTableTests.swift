import Testing
import TestSupport
@testable import Primitives

@Suite struct LRUTableTests {
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
