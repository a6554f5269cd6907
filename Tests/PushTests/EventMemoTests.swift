import EpisodeSync
import Feeds
import Testing

@testable import Push

/// Issue 66: a turn's memo (the events it made, the podcasts' data it read) is freed when the
/// turn ends. Its fragments read the podcasts through a closure that held the memo, the memo
/// held the fragments: every turn that told a change kept its events and data for good.
@Suite struct EventMemoTests {
    @Test func aTurnsMemoIsFreedWhenTheTurnEnds() {
        weak var gone: EventMemo?
        do {
            let memo = EventMemo(changes: [1: .unknown, 2: .unknown], read: { _ in .pending })
            _ = memo.fragments.event(ids: [1, 2], token: SyncToken(), limit: 10, maxItemBytes: 1 << 16)
            _ = memo.status(1)
            memo.keep(.nothing, as: "10|-|1,2")
            gone = memo
        }
        #expect(gone == nil)
    }
}
