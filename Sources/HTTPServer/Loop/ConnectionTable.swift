/// A loop's connections by file descriptor: an array indexed by the descriptor (the kernel
/// hands out the lowest free one, so they stay small and dense), not a hash table. Every
/// readiness event and every write looks its connection up; an index costs a compare and a
/// load where hashing an `Int32` cost about a hundred instructions.
struct ConnectionTable {
    private var slots: [Connection?] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    subscript(fd: Int32) -> Connection? {
        get { fd >= 0 && Int(fd) < slots.count ? slots[Int(fd)] : nil }
        set {
            guard fd >= 0 else { return }
            let i = Int(fd)
            if i >= slots.count {
                guard newValue != nil else { return }
                slots.append(contentsOf: repeatElement(nil, count: max(i + 1, slots.count * 2, 64) - slots.count))
            }
            count += (newValue != nil ? 1 : 0) - (slots[i] != nil ? 1 : 0)
            slots[i] = newValue
        }
    }

    /// Every connection, as a snapshot (closing some while walking it is safe).
    var values: [Connection] { slots.compactMap { $0 } }

    /// The connections `picks` selects, as a snapshot: the sweep looks at every connection four
    /// times a second and picks few (a snapshot of all of them, thousands of idle streams, cost
    /// an idle replica more than its heartbeats' bookkeeping).
    func filter(_ picks: (Connection) -> Bool) -> [Connection] {
        var picked: [Connection] = []
        for case let conn? in slots where picks(conn) { picked.append(conn) }
        return picked
    }
}
