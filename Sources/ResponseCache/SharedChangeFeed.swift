/// Word between replicas that a key's entry changed (a feed read again and found new): the
/// replicas that care take the newer entry from the shared tier rather than wait for their own
/// turn to read it. Owned here, implemented by the tier (Redis), optional like it.
public protocol SharedChangeFeed: Sendable {
    /// Tells the other replicas that `key` now holds the entry tagged `etag`.
    func announce(_ key: String, etag: String) async
    /// What was announced after `cursor` (nil: nothing yet; the cursor of now), at most a
    /// bounded batch; nil when the tier did not answer.
    func changes(after cursor: String?) async -> (cursor: String, changes: [(key: String, etag: String)])?
    /// What identifies the tier's contents: the value kept under one key, `proposed` when
    /// none is (the tier is new, restarted empty or flushed). A replica that sees it change
    /// knows the tier lost what it held (announcements, pings, entries) and catches up. nil
    /// when the tier did not answer.
    func epoch(proposing proposed: String) async -> String?
}
