/// Publishers' pings kept in the shared tier until a replica has read the feed: a `202` to a
/// ping is a promise, and a replica that dies between taking a ping and reading its feed must
/// not break it. Another replica takes over what one took and left unacknowledged. Owned
/// here beside the change feed, implemented by the tier (Redis), optional like it.
public protocol SharedPingQueue: Sendable {
    /// Keeps word that podcast `id`'s feed must be read, not before `notBefore` (Unix
    /// milliseconds; 0: at once: a ping within its feed's interval is read when it has passed);
    /// false when the tier did not take it.
    func enqueue(_ id: Int, notBefore: Int64) async -> Bool
    /// Pings for this replica to read: new ones, and ones another replica took and left
    /// unacknowledged for `stalled` seconds (it died). nil when the tier did not answer.
    func take(max: Int, stalled: Double) async -> [QueuedPing]?
    /// The ping's feed was read (or given up on): it leaves the queue.
    func done(_ entry: String) async
}

/// A ping taken from the shared queue: its entry (to acknowledge), its podcast, and when it
/// may be read (Unix milliseconds; 0: at once).
public struct QueuedPing: Sendable, Equatable {
    public let entry: String
    public let id: Int
    public let notBefore: Int64

    public init(entry: String, id: Int, notBefore: Int64 = 0) {
        self.entry = entry
        self.id = id
        self.notBefore = notBefore
    }
}
