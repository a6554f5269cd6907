/// Publishers' pings kept in the shared tier until a replica has read the feed: a `202` to a
/// ping is a promise, and a replica that dies between taking a ping and reading its feed must
/// not break it. Another replica takes over what one took and left unacknowledged. Owned
/// here beside the change feed, implemented by the tier (Redis), optional like it.
public protocol SharedPingQueue: Sendable {
    /// Keeps word that podcast `id`'s feed must be read; false when the tier did not take it.
    func enqueue(_ id: Int) async -> Bool
    /// Pings for this replica to read now: new ones, and ones another replica took and left
    /// unacknowledged for `stalled` seconds (it died). nil when the tier did not answer.
    func take(max: Int, stalled: Double) async -> [(entry: String, id: Int)]?
    /// The ping's feed was read (or given up on): it leaves the queue.
    func done(_ entry: String) async
}
