import Synchronization

/// This replica's streams, each named by a slot: 4 bytes in every set that names it (each
/// podcast's watchers, the streams with pages to send) where its object's identity took 8. At
/// 10,000 streams of 20 podcasts, those sets are most of what the hub holds per stream.
/// Slots are reused once free: admission bounds how many there are.
struct SubscriberSlots {
    private var slots: [EpisodeEventHub.Subscriber?] = []
    private var free: [UInt32] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Takes a slot for `s` (noted in `s.slot`).
    mutating func insert(_ s: EpisodeEventHub.Subscriber) -> UInt32 {
        count += 1
        let slot: UInt32
        if let reused = free.popLast() {
            slot = reused
            slots[Int(reused)] = s
        } else {
            slot = UInt32(truncatingIfNeeded: slots.count)
            slots.append(s)
        }
        s.slot.store(slot, ordering: .relaxed)
        return slot
    }

    /// Frees `s`'s slot; nil when it holds none (never added, or removed already).
    mutating func remove(_ s: EpisodeEventHub.Subscriber) -> UInt32? {
        let slot = s.slot.load(ordering: .relaxed)
        guard Int(slot) < slots.count, slots[Int(slot)] === s else { return nil }
        slots[Int(slot)] = nil
        free.append(slot)
        count -= 1
        s.slot.store(EpisodeEventHub.Subscriber.noSlot, ordering: .relaxed)
        return slot
    }

    subscript(slot: UInt32) -> EpisodeEventHub.Subscriber? { Int(slot) < slots.count ? slots[Int(slot)] : nil }

    var all: [EpisodeEventHub.Subscriber] { slots.compactMap { $0 } }
}
