/// How often a watched feed is read again: by its own cadence, the typical gap between its
/// newest episodes (a twentieth of it: a daily show about every 72 minutes), within bounds.
/// A feed with fewer than two dated episodes, or a dormant one, is read at the longest. What
/// the publisher says (`Cache-Control`, `Expires`, RSS `ttl`, `sy:updatePeriod`) is a floor:
/// a feed is never read more often than its publisher asks, up to a day.
public enum EpisodeCadence {
    public static func refreshInterval(_ data: EpisodeFeedData, now: Double, within bounds: ClosedRange<Double>) -> Double {
        let own = ownInterval(data, now: now, within: bounds)
        return max(own, Double(data.hints.interval ?? 0))
    }

    static func ownInterval(_ data: EpisodeFeedData, now: Double, within bounds: ClosedRange<Double>) -> Double {
        let dated = data.entries.lazy.map(\.published).filter { $0 != EpisodeFeedData.undated }.prefix(8)
        let times = Array(dated).sorted(by: >)
        guard times.count >= 2, let newest = times.first else { return bounds.upperBound }
        var gaps: [Double] = []
        for (a, b) in zip(times, times.dropFirst()) { gaps.append(Double(a) - Double(b)) }
        gaps.sort()
        let typical = gaps[gaps.count / 2]
        // Silent for ten of its gaps: dormant.
        if now - Double(newest) > 10 * max(typical, 3600) { return bounds.upperBound }
        return min(max(typical / 20, bounds.lowerBound), bounds.upperBound)
    }
}
