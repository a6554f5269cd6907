import TestSupport
import Testing
@testable import Push

/// The event stream format: one `data:` line per line of the payload, an id without line
/// breaks (a stranger's bytes cannot start a field of their own).
@Suite(.offPool) struct ServerSentEventTests {
    @Test func linesOfTheDataAreDataLinesAndTheIdHasNoBreak() {
        let event = ServerSentEvent.encode(id: "a\nid: forged", event: "episodes", data: Array("{\"a\":1}\nsecond\r\nthird".utf8))
        #expect(String(decoding: event, as: UTF8.self) == "id: aid: forged\nevent: episodes\ndata: {\"a\":1}\ndata: second\ndata: third\n\n")
        #expect(String(decoding: ServerSentEvent.encode(id: nil, event: "episodes", data: []), as: UTF8.self) == "event: episodes\ndata: \n\n")
    }
}
