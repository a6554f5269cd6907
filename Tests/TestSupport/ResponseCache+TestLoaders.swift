@testable import ResponseCache

/// The shapes tests write loaders and lookups in. Production enters through
/// `lookupOrFetch` and `refreshInBackground`, both with a loader told which entry it
/// refreshes, and the alias lookup at a time it read; tests also start flights directly
/// (`fetch`, internal).
extension ResponseCache {
    /// A loader that is not told which entry it refreshes.
    public typealias Loader = @Sendable () async -> Result<CachedResponse, CacheLoadError>

    /// Always admitted, with a loader that ignores the entry it refreshes.
    public func fetch(_ key: String, revalidate: Bool = false, loader: @escaping Loader) async -> Outcome {
        await fetch(key, revalidate: revalidate, refreshing: { _ in await loader() })
    }

    /// Always admitted.
    public func fetch(_ key: String, revalidate: Bool = false, refreshing loader: @escaping RefreshingLoader) async -> Outcome {
        guard let outcome = await fetch(key, revalidate: revalidate, admit: { true }, refreshing: loader) else {
            preconditionFailure("a fetch that always admits was not admitted")
        }
        return outcome
    }

    public func fetch(_ key: String, revalidate: Bool = false, admit: () -> Bool, loader: @escaping Loader) async -> Outcome? {
        await fetch(key, revalidate: revalidate, admit: admit, refreshing: { _ in await loader() })
    }

    /// The hot path's answer, when it has one (a fresh entry).
    public func lookup(alias: String) -> CachedResponse? {
        var known: KnownAlias?
        return lookup(alias: alias, now: now, known: &known)
    }

    public func refreshInBackground(_ key: String, loader: @escaping Loader) {
        refreshInBackground(key, refreshing: { _ in await loader() })
    }
}
