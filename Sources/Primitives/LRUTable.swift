/// A dictionary that remembers use order: lookup, insert, touch, remove and
/// "remove the least recently used" are all O(1) (a hash map into an array-backed
/// doubly linked list, freed slots reused). Not thread-safe: callers hold a lock. The
/// response cache keeps its entries in one, the client quota its buckets. Inlinable, so
/// each user gets a specialised copy: a cache hit makes no generic calls.
public struct LRUTable<Key: Hashable, Value> {
    @usableFromInline struct Node {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var newer = -1
        @usableFromInline var older = -1

        @inlinable init(key: Key, value: Value) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline var index: [Key: Int] = [:]
    @usableFromInline var nodes: [Node] = []
    @usableFromInline var free: [Int] = []
    @usableFromInline var newest = -1
    @usableFromInline var oldest = -1

    @inlinable public init() {}

    @inlinable public var count: Int { index.count }

    /// Every value, in no particular order.
    @inlinable public var values: [Value] { index.values.compactMap { nodes[$0].value } }

    /// The value without changing its position.
    @inlinable public func peek(_ key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        return nodes[i].value
    }

    /// The value, marked most recently used.
    @inlinable public mutating func touch(_ key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        moveToNewest(i)
        return nodes[i].value
    }

    /// Where `key` is stored now, for `touch(_:at:)`.
    @inlinable public func slot(of key: Key) -> Int? { index[key] }

    /// `touch` without hashing: the value at `slot` if that slot still holds `key` (a caller
    /// that resolves one key over and over keeps its slot; the cache's alias table does). Nil
    /// when the slot was freed or now holds another key: then look up by key.
    @inlinable public mutating func touch(_ key: Key, at slot: Int) -> Value? {
        guard slot >= 0, slot < nodes.count, nodes[slot].key == key else { return nil }
        moveToNewest(slot)
        return nodes[slot].value
    }

    /// Inserts or replaces, as the most recently used; returns the replaced value.
    @discardableResult
    @inlinable public mutating func set(_ key: Key, _ value: Value) -> Value? {
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
    @inlinable public mutating func removeValue(forKey key: Key) -> Value? {
        guard let i = index.removeValue(forKey: key) else { return nil }
        return release(i)
    }

    /// Removes and returns the least recently used entry.
    @discardableResult
    @inlinable public mutating func removeOldest() -> (key: Key, value: Value)? {
        guard oldest >= 0 else { return nil }
        let i = oldest
        guard let key = nodes[i].key else { return nil }
        index[key] = nil
        guard let value = release(i) else { return nil }
        return (key, value)
    }

    @inlinable mutating func release(_ i: Int) -> Value? {
        unlink(i)
        let value = nodes[i].value
        nodes[i].value = nil
        nodes[i].key = nil
        free.append(i)
        return value
    }

    @inlinable mutating func moveToNewest(_ i: Int) {
        guard newest != i else { return }
        unlink(i)
        linkAsNewest(i)
    }

    @inlinable mutating func linkAsNewest(_ i: Int) {
        nodes[i].older = newest
        nodes[i].newer = -1
        if newest >= 0 { nodes[newest].newer = i }
        newest = i
        if oldest < 0 { oldest = i }
    }

    @inlinable mutating func unlink(_ i: Int) {
        let (newer, older) = (nodes[i].newer, nodes[i].older)
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
        nodes[i].newer = -1
        nodes[i].older = -1
    }
}
