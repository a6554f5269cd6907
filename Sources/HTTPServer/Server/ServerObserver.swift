/// Receives events from the server; called on event-loop threads, so keep it cheap.
public protocol ServerObserver: Sendable {
    func requestCompleted(_ record: RequestRecord)
}

/// An observer that ignores everything.
public struct NoObserver: ServerObserver {
    public init() {}
    public func requestCompleted(_ record: RequestRecord) {}
}
