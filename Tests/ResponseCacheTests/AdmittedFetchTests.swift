import Testing
import TestSupport
@testable import ResponseCache

/// `fetch(admit:)`: only a caller that starts an upstream fetch is asked (and charged).
@Suite(.offPool) struct AdmittedFetchTests {
    let clock = ManualClock()
    let policy = FreshnessPolicy(ttl: 60, staleWhileRevalidate: 600, staleIfError: 86_400)

    @Test func joiningAFlightInProgressIsNeverCharged() async {
        let clock = self.clock, policy = self.policy
        let cache = ResponseCache(maxBytes: 1 << 20, clock: { clock.now })
        let calls = Counter(), asked = Counter()
        let loader: ResponseCache.Loader = {
            calls.increment()
            try? await Task.sleep(for: .milliseconds(100))
            return .success(CachedResponse(body: Array("x".utf8), gzippedBody: nil, storedAt: clock.now, policy: policy))
        }
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    let outcome = await cache.fetch(
                        "k",
                        admit: {
                            asked.increment()
                            return true
                        }, loader: loader)
                    if case .loaded = outcome { return true }
                    return false
                }
            }
            var all: [Bool] = []
            for await r in group { all.append(r) }
            return all
        }
        #expect(results.allSatisfy { $0 })
        #expect(calls.count == 1)
        #expect(asked.count == calls.count)  // only the caller that started the fetch was asked
    }

    @Test func aRefusedCallerStartsNothing() async {
        let clock = self.clock
        let cache = ResponseCache(maxBytes: 1 << 20, clock: { clock.now })
        let calls = Counter()
        let outcome = await cache.fetch(
            "k", admit: { false },
            loader: {
                calls.increment()
                return .failure(CacheLoadError(status: 502, code: "x", message: "x"))
            })
        #expect(outcome == nil)
        #expect(calls.count == 0)
        #expect(!cache.isRefreshing("k"))
    }
}
