/// `OTEL_TRACES_SAMPLER` (and its argument): which traces are recorded. A trace started
/// here is sampled by the ratio on its id (so every replica and layer decides the same);
/// the `parentbased_*` samplers follow a caller's `sampled` flag when there is a caller.
public struct TraceSampler: Sendable, Equatable {
    public let followsParent: Bool
    /// 0…1: the share of new traces recorded.
    public let ratio: Double

    public init(followsParent: Bool, ratio: Double) {
        self.followsParent = followsParent
        self.ratio = ratio.isFinite ? min(max(ratio, 0), 1) : 1
    }

    public static let names = [
        "always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio",
    ]

    /// nil for a name OpenTelemetry does not define (or one FeedProxy does not offer).
    public init?(name: String, argument: Double?) {
        switch name {
        case "always_on": self.init(followsParent: false, ratio: 1)
        case "always_off": self.init(followsParent: false, ratio: 0)
        case "traceidratio": self.init(followsParent: false, ratio: argument ?? 1)
        case "parentbased_always_on": self.init(followsParent: true, ratio: 1)
        case "parentbased_always_off": self.init(followsParent: true, ratio: 0)
        case "parentbased_traceidratio": self.init(followsParent: true, ratio: argument ?? 1)
        default: return nil
        }
    }

    public func decide(_ trace: TraceContext) -> TraceContext {
        var decided = trace
        let sampled: Bool
        if followsParent, trace.parentID != 0 {
            sampled = trace.isSampled
        } else if ratio >= 1 {
            sampled = true
        } else {
            // The low 63 bits of the trace id against the ratio: deterministic per trace.
            sampled = Double(trace.traceLow & (UInt64.max >> 1)) < ratio * Double(UInt64.max >> 1)
        }
        decided.flags = sampled ? decided.flags | 1 : decided.flags & ~1
        return decided
    }
}
