import Primitives

/// When FeedProxy saw each episode of a feed: the history a sync token is a position in.
///
/// A refresh that brings episodes not seen before, or changed (their JSON hashes differently),
/// makes a new version of the feed, numbered by when it was made (Unix seconds, and always
/// past the last version's number); each such episode is
/// stamped with that version and its ordinal among the version's changes, in feed order. An
/// episode seen before keeps its stamp, so what a client has is "every stamp up to a point",
/// whatever order feeds are refreshed in and whatever dates their publishers wrote.
///
/// A version's `id` hashes its parent's id, its number and the hashes of what it brought: two
/// replicas that build the same change from the same parent in the same second agree on it,
/// and a token naming a version this history does not hold (another lineage, or one
/// forgotten) is recognised. Numbers from the clock make a history rebuilt from nothing (its
/// data evicted everywhere) start past every version a client could name, so such a token is
/// told apart from one ahead of this replica's data (another replica refreshed it since).
public struct EpisodeChangeLog: Sendable, Equatable {
    public struct Version: Sendable, Equatable {
        public let seq: UInt32
        public let id: UInt32
        /// Episodes stamped with this version (ordinals 0..<changes); 0 for a version that
        /// only removed episodes.
        public let changes: UInt32
    }

    /// Ascending by `seq`: every version an episode is still stamped with, and the latest
    /// `keptVersions` (so a token from a few refreshes ago is still followed).
    public let versions: [Version]

    /// The versions the log remembers beyond those its episodes are stamped with.
    package static let keptVersions = 64

    public static let empty = EpisodeChangeLog(versions: [])

    /// The feed's current version (0: nothing seen yet).
    public var current: Version { versions.last ?? Version(seq: 0, id: 0, changes: 0) }

    public func version(_ seq: UInt32) -> Version? {
        // Ascending: a binary search.
        var low = 0, high = versions.count
        while low < high {
            let mid = (low + high) / 2
            if versions[mid].seq < seq { low = mid + 1 } else { high = mid }
        }
        return low < versions.count && versions[low].seq == seq ? versions[low] : nil
    }

    /// Stamps a refresh's episodes (their content hashes, in feed order) against what the
    /// previous data held: the stamps, in the same order, and the log that goes with them.
    /// `removed`: the anchors of episodes the feed no longer lists (a removal alone makes a
    /// version too, of no changes: the apps are told of it). `time`: now, in Unix seconds.
    public static func stamp(_ hashes: [UInt64], removing removed: [UInt64] = [], after previous: EpisodeHistory?, at time: Int) -> (
        stamps: [EpisodeStamp], log: EpisodeChangeLog
    ) {
        let parent = previous?.log ?? .empty
        let after = parent.current.seq == UInt32.max ? parent.current.seq : parent.current.seq + 1
        let next = max(after, UInt32(clamping: time))
        var stamps: [EpisodeStamp] = []
        stamps.reserveCapacity(hashes.count)
        var brought: [UInt64] = []
        var ordinals: [UInt64: UInt32] = [:]
        for hash in hashes {
            if let known = previous?.stamps[hash] {
                stamps.append(known)
            } else if let again = ordinals[hash] {
                stamps.append(EpisodeStamp(seq: next, ordinal: again))  // the same episode twice in one feed
            } else {
                let ordinal = UInt32(truncatingIfNeeded: brought.count)  // at most maxEpisodes
                ordinals[hash] = ordinal
                stamps.append(EpisodeStamp(seq: next, ordinal: ordinal))
                brought.append(hash)
            }
        }
        // Nothing new (an unchanged or only shortened feed): the same version, the same log.
        guard !brought.isEmpty || !removed.isEmpty, next > parent.current.seq else { return (stamps, parent.retaining(stamps)) }
        var identity: [UInt8] = []
        identity.reserveCapacity(9 + (brought.count + removed.count) * 8)
        LittleEndianBytes.append(UInt64(parent.current.id), 4, to: &identity)
        LittleEndianBytes.append(UInt64(next), 4, to: &identity)
        for hash in brought { LittleEndianBytes.append(hash, 8, to: &identity) }
        if !removed.isEmpty {
            identity.append(0xFF)
            for anchor in removed { LittleEndianBytes.append(anchor, 8, to: &identity) }
        }
        let version = Version(seq: next, id: UInt32(truncatingIfNeeded: XXH64.hash(identity)), changes: UInt32(brought.count))
        return (stamps, EpisodeChangeLog(versions: parent.versions + [version]).retaining(stamps))
    }

    /// The versions still needed: those stamps name, and the latest `keptVersions`.
    package func retaining(_ stamps: [EpisodeStamp]) -> EpisodeChangeLog {
        guard versions.count > Self.keptVersions else { return self }
        let named = Set(stamps.map(\.seq))
        let recent = versions.count - Self.keptVersions
        var kept: [Version] = []
        for (i, v) in versions.enumerated() where i >= recent || named.contains(v.seq) { kept.append(v) }
        return EpisodeChangeLog(versions: kept)
    }
}

/// Where an episode stands in its feed's history: the version that brought it (or its latest
/// change) and its ordinal among that version's changes.
public struct EpisodeStamp: Sendable, Hashable, Comparable {
    public let seq: UInt32
    public let ordinal: UInt32

    public init(seq: UInt32, ordinal: UInt32) {
        self.seq = seq
        self.ordinal = ordinal
    }

    public static func < (a: EpisodeStamp, b: EpisodeStamp) -> Bool { (a.seq, a.ordinal) < (b.seq, b.ordinal) }
}
