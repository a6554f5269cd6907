/// A dictionary that remembers use order: lookup, insert, touch, remove and
/// "remove the least recently used" are all O(1) (a hash map into an array-backed
/// doubly linked list, freed slots reused). Not thread-safe: callers hold a lock. The
/// response cache keeps its entries in one, the client quota its buckets.
public struct LRUTable<Key: Hashable, Value> {
    private struct Node {
        var key: Key?
        var value: Value?
        var newer = -1
        var older = -1
    }

    private var index: [Key: Int] = [:]
    private var nodes: [Node] = []
    private var free: [Int] = []
    private var newest = -1
    private var oldest = -1

    public init() {}

    public var count: Int { index.count }

    /// Every value, in no particular order.
    public var values: [Value] { index.values.compactMap { nodes[$0].value } }

    /// The value without changing its position.
    public func peek(_ key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        return nodes[i].value
    }

    /// The value, marked most recently used.
    public mutating func touch(_ key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        moveToNewest(i)
        return nodes[i].value
    }

    /// Inserts or replaces, as the most recently used; returns the replaced value.
    @discardableResult
    public mutating func set(_ key: Key, _ value: Value) -> Value? {
        if let i = index[key] {
            let old = nodes[i].value
            nodes[i].value = value
            moveToNewest(i)
            return old
        }
        let i: Int
        if let reused = free.popLast() {
            i = reused
            nodes[i] = Node(key: key, value: value)
        } else {
            i = nodes.count
            nodes.append(Node(key: key, value: value))
        }
        index[key] = i
        linkAsNewest(i)
        return nil
    }

    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        guard let i = index.removeValue(forKey: key) else { return nil }
        return release(i)
    }

    /// Removes and returns the least recently used entry.
    @discardableResult
    public mutating func removeOldest() -> (key: Key, value: Value)? {
        guard oldest >= 0 else { return nil }
        let i = oldest
        guard let key = nodes[i].key else { return nil }
        index[key] = nil
        guard let value = release(i) else { return nil }
        return (key, value)
    }

    private mutating func release(_ i: Int) -> Value? {
        unlink(i)
        let value = nodes[i].value
        nodes[i].value = nil
        nodes[i].key = nil
        free.append(i)
        return value
    }

    private mutating func moveToNewest(_ i: Int) {
        guard newest != i else { return }
        unlink(i)
        linkAsNewest(i)
    }

    private mutating func linkAsNewest(_ i: Int) {
        nodes[i].older = newest
        nodes[i].newer = -1
        if newest >= 0 { nodes[newest].newer = i }
        newest = i
        if oldest < 0 { oldest = i }
    }

    private mutating func unlink(_ i: Int) {
        let (newer, older) = (nodes[i].newer, nodes[i].older)
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
        nodes[i].newer = -1
        nodes[i].older = -1
    }
}
