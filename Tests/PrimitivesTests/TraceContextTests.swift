import Primitives
import TestSupport
import Testing

/// W3C Trace Context rules (issue 24): what is continued, what starts a new trace.
@Suite(.offPool) struct TraceContextTests {
    static let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    static func continued(_ header: String?, state: String? = nil) -> TraceContext {
        var ids = TraceIDs()
        return TraceContext.continuing(traceparent: header, tracestate: state, ids: &ids)
    }

    @Test func aValidTraceparentIsContinuedWithANewSpan() {
        let t = Self.continued(Self.valid, state: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
        #expect(t.traceHigh == 0x4bf9_2f35_77b3_4da6 && t.traceLow == 0xa3ce_929d_0e0e_4736)
        #expect(t.parentID == 0x00f0_67aa_0ba9_02b7)
        #expect(t.flags == 1)
        #expect(t.spanID != 0 && t.spanID != t.parentID)
        #expect(t.state == "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
        // The upstream sees the same trace and flags, with a parent of our choosing.
        let sent = t.traceparent(parent: 0xABC)
        #expect(sent == "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000abc-01")
    }

    @Test(arguments: [
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",  // uppercase hex
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // all-zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // all-zero parent id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  // version 00 is exactly 55
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  // short trace id
        "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",  // a later version needs "-" after the flags
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", "", "garbage",
    ])
    func invalidOnesStartANewTrace(_ header: String) {
        let t = Self.continued(header, state: "a=b")
        #expect(t.parentID == 0)
        #expect(t.traceHigh | t.traceLow != 0)
        #expect(t.traceHigh != 0x4bf9_2f35_77b3_4da6)
        #expect(t.flags == 0)
        #expect(t.state == nil)  // tracestate only travels with a valid traceparent
    }

    @Test func aLaterVersionIsReadAsVersion00() {
        let t = Self.continued("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-adds")
        #expect(t.parentID == 0x00f0_67aa_0ba9_02b7)
    }

    @Test func aMissingOrRepeatedHeaderStartsANewTraceWithRandomIds() {
        let a = Self.continued(nil), b = Self.continued(nil)
        #expect(a.parentID == 0 && a.traceHigh | a.traceLow != 0)
        #expect(a.traceLow != b.traceLow || a.traceHigh != b.traceHigh)
        var ids = TraceIDs()
        for _ in 0..<10_000 { #expect(ids.next() != 0) }
    }

    @Test func anOverlongTracestateIsDropped() {
        #expect(Self.continued(Self.valid, state: String(repeating: "a", count: 513)).state == nil)
    }
}
