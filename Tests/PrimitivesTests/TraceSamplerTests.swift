import TestSupport
import Testing
@testable import Primitives

@Suite(.offPool) struct TraceSamplerTests {
    static func trace(_ low: UInt64, parent: UInt64 = 0, flags: UInt8 = 0) -> TraceContext {
        TraceContext(traceHigh: 1, traceLow: low, spanID: 2, parentID: parent, flags: flags)
    }

    @Test func parentBasedFollowsTheCallerAndRatioDecidesNewTraces() throws {
        let sampler = try #require(TraceSampler(name: "parentbased_traceidratio", argument: 0.25))
        #expect(sampler.decide(Self.trace(.max, parent: 9, flags: 1)).isSampled, "a sampled caller is followed")
        #expect(!sampler.decide(Self.trace(0, parent: 9, flags: 0)).isSampled, "so is one that does not sample")
        var ids = TraceIDs()
        let kept = (0..<20_000).filter { _ in sampler.decide(Self.trace(ids.next())).isSampled }.count
        #expect((4_000...6_000).contains(kept), "about a quarter of new traces: \(kept)")
        // The same trace id gets the same answer on every replica and layer.
        let t = Self.trace(0x1234_5678_9ABC_DEF0)
        #expect(sampler.decide(t) == sampler.decide(t))
    }

    @Test func namedSamplers() {
        #expect(TraceSampler(name: "always_off", argument: nil)?.decide(Self.trace(1, parent: 9, flags: 1)).isSampled == false)
        #expect(TraceSampler(name: "always_on", argument: nil)?.decide(Self.trace(1, parent: 9, flags: 0)).isSampled == true)
        #expect(TraceSampler(name: "traceidratio", argument: 0)?.decide(Self.trace(.max >> 1)).isSampled == false)
        #expect(TraceSampler(name: "parentbased_always_on", argument: nil)?.decide(Self.trace(5)).isSampled == true)
        #expect(TraceSampler(name: "jaeger_remote", argument: nil) == nil)
        #expect(TraceSampler(followsParent: true, ratio: .nan).ratio == 1)
    }
}
