import Feeds
import Primitives

/// Library handles (`LibraryHandle`) where records last (`FeedRecords`: Redis or SQLite), and
/// in this process when there is no store (a `DATA_DIR` that cannot be used): a failing store
/// costs the handle its life past a restart, not its use now.
package final class LibraryHandles: Sendable {
    private let records: (any FeedRecords)?
    /// Handles kept here too (the store's copy may lag; without a store, the only one). Bounded.
    private let here = Locked<[String: LibraryHandle]>([:])
    static let maxHere = 10_000

    init(records: (any FeedRecords)?) { self.records = records }

    /// Keeps `handle` and gives its name.
    package func keep(_ handle: LibraryHandle) async -> String {
        let name = handle.name
        remember(handle, as: name)
        if let records { _ = await records.keepLibrary(name, handle.record) }
        return name
    }

    /// The handle named `name`, its life renewed; nil when none is kept (never made, or lapsed).
    package func resolve(_ name: String) async -> LibraryHandle? {
        guard LibraryHandle.isName(name) else { return nil }
        if let records, let record = await records.library(name), let handle = LibraryHandle(record: record), handle.name == name {
            // Renewed by its use: an app that listens every day keeps its handle.
            _ = await records.keepLibrary(name, record)
            remember(handle, as: name)
            return handle
        }
        // Kept here but lost by the store (a failed write, a Redis emptied or evicting): written again.
        guard let kept = here.withLock({ $0[name] }) else { return nil }
        if let records { _ = await records.keepLibrary(name, kept.record) }
        return kept
    }

    private func remember(_ handle: LibraryHandle, as name: String) {
        here.withLock { kept in
            if kept.count >= Self.maxHere, kept[name] == nil { kept.removeAll(keepingCapacity: true) }
            kept[name] = handle
        }
    }
}
