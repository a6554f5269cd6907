import Primitives
import TestSupport
import Testing

/// A span's attributes cost nothing when tracing is off (no scope, no sink, or a trace the
/// sampler drops): they are built only for a span that is recorded, and then once.
@Suite(.offPool) struct TraceScopeTests {
    final class Sink: SpanSink {
        let sampled: Bool
        let spans = Locked<[Span]>([])
        init(sampled: Bool = true) { self.sampled = sampled }
        func decide(_ trace: TraceContext) -> TraceContext {
            var t = trace
            t.flags = sampled ? 1 : 0
            return t
        }
        func record(_ span: Span) { spans.withLock { $0.append(span) } }
        var recorded: [Span] { spans.withLock { $0 } }
    }

    final class Counter: Sendable {
        let count = Locked(0)
        var value: Int { count.withLock { $0 } }
        func attributes() -> [(String, Span.Value)] {
            count.withLock { $0 += 1 }
            return [("built", .bool(true))]
        }
    }

    static let trace = TraceContext(traceHigh: 1, traceLow: 2, spanID: 3, flags: 1)

    @Test func withoutAScopeAttributesAreNotBuilt() async {
        let counter = Counter()
        #expect(TraceScope.current == nil)
        let a = await TraceScope.span("a", counter.attributes()) { notes in
            notes.set("k", .int(1))
            return 1
        }
        let b = TraceScope.syncSpan("b", counter.attributes()) { _ in 2 }
        let c = await TraceScope.span("c", kind: .client, counter.attributes()) { _ in 3 }
        #expect(a + b + c == 6)
        #expect(counter.value == 0)
    }

    @Test func aRootThatIsNotRecordedDoesNotBuildItsAttributes() async {
        let counter = Counter()
        let dropped = Sink(sampled: false)
        #expect(await TraceScope.root("r", linkedTo: Self.trace, sink: nil, counter.attributes()) { 1 } == 1)
        #expect(await TraceScope.root("r", linkedTo: Self.trace, sink: dropped, counter.attributes()) { 2 } == 2)
        #expect(counter.value == 0 && dropped.recorded.isEmpty)
    }

    @Test func aRecordedSpanBuildsItsAttributesOnce() async throws {
        let counter = Counter()
        let sink = Sink()
        await TraceScope.$current.withValue(TraceScope(trace: Self.trace, sink: sink)) {
            await TraceScope.span("a", counter.attributes()) { notes in notes.set("k", .int(1)) }
            TraceScope.syncSpan("b", counter.attributes()) { _ in }
        }
        _ = await TraceScope.root("r", linkedTo: Self.trace, sink: sink, counter.attributes()) { 0 }
        #expect(counter.value == 3)
        let spans = sink.recorded
        #expect(spans.map(\.name) == ["a", "b", "r"])
        let first = try #require(spans.first)
        #expect(first.attributes.map(\.0) == ["built", "k"])
        #expect(spans.allSatisfy { $0.attributes.first?.0 == "built" })
    }

    /// A leaf span (a parse, a queue wait) takes no closure and no scope of its own: without a
    /// scope there is nothing to end; with one it is recorded as its child, error included.
    @Test func aLeafSpanIsAChildOfTheScopeItStartedIn() async throws {
        let counter = Counter()
        #expect(LeafSpan.start() == nil)
        let sink = Sink()
        let scope = TraceScope(trace: Self.trace, sink: sink)
        TraceScope.$current.withValue(scope) {
            let leaf = LeafSpan.start()
            #expect(TraceScope.current?.trace.spanID == Self.trace.spanID)  // no scope of its own
            leaf?.end("parse", counter.attributes(), error: "bad body")
        }
        let span = try #require(sink.recorded.first)
        #expect(span.name == "parse" && span.error == "bad body" && counter.value == 1)
        #expect(span.trace.parentID == Self.trace.spanID && span.trace.traceLow == Self.trace.traceLow)
    }
}
