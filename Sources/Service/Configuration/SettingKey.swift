import Primitives

/// A setting an upstream declares in its own file (`Catalog/`), with its default: its value
/// lives in every `Configuration` without a stored property there, so a new upstream adds
/// its settings without editing `Configuration`. Compared by identity: each is one
/// `static let` of `Setting`.
final class SettingKey<Value: Sendable>: Sendable, Hashable {
    let defaultValue: Value

    init(default value: Value) {
        defaultValue = value
    }

    static func == (a: SettingKey, b: SettingKey) -> Bool { a === b }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// The upstreams' settings, each declared beside its upstream: `extension Setting { static let … }`.
enum Setting {}

extension Configuration {
    /// A declared setting's value: what was set, else its default.
    subscript<Value>(setting: SettingKey<Value>) -> Value {
        get {
            #if DEBUG
                SettingReads.note(\Configuration.[setting])
            #endif
            return declaredSettings[ObjectIdentifier(setting)] as? Value ?? setting.defaultValue
        }
        set { declaredSettings[ObjectIdentifier(setting)] = newValue }
    }
}

#if DEBUG
    /// The declared settings code has read (debug builds only), so a test can find one read
    /// that no option parses: a setting left out of its upstream's `settings` would otherwise
    /// keep its default silently, missing from `--help` and the docs.
    enum SettingReads {
        private static let read = Locked<Set<AnyKeyPath>>([])

        static func note(_ keyPath: AnyKeyPath) {
            read.withLock { _ = $0.insert(keyPath) }
        }

        static var all: Set<AnyKeyPath> { read.withLock { $0 } }
    }
#endif
