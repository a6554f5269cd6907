import Primitives

/// What one input did in an upstream's fuzz entry: how many items it was read as (an
/// upstream's own recorded answer is read as some; garbage as none) and the first broken
/// promise, if any. The count is what lets a test tell an entry that reads its upstream's
/// answers from one that reads nothing.
public struct FuzzRun: Sendable, Equatable {
    public private(set) var items = 0
    public private(set) var finding: String?

    public init() {}

    public init(finding: String?) {
        self.finding = finding
    }

    /// Counts the items of one reading of the input (none when it was not an answer).
    public mutating func read(_ count: Int?) {
        items = items.addingReportingOverflow(count ?? 0).partialValue
    }

    /// Records a broken promise (the first one is kept).
    public mutating func found(_ problem: String?) {
        if finding == nil { finding = problem }
    }
}

extension FeedEnvelope {
    /// Encodes the envelope as its route answers it; how many items it holds.
    func encodedCount() throws(ClientError) -> Int {
        _ = try FeedJSON.encode(self)
        return items.count
    }
}
