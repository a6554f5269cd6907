/// Work handed over an item at a time while the caller goes on making more (a big feed's items
/// as expat reads them), done meanwhile on helper threads of its own: the caller's serial stage
/// and the items' own work overlap instead of following each other. `finish()` then takes what
/// is left on the caller's thread too and returns every result by its key. The helpers are not
/// a pool anything else needs (see `ParallelWork`), and end with `finish()`.
public final class OverlappedWork<Input: Sendable, Output: Sendable>: Sendable {
    private struct State {
        var queue: [(key: Int, input: Input)] = []
        /// The next item of `queue` to take (taken ones are not removed one by one).
        var next = 0
        var results: [Int: Output] = [:]
        /// Items taken and not yet done.
        var working = 0
        var finishing = false
    }

    private let transform: @Sendable (Input) -> Output
    private let state = Locked(State())
    /// One per helper (a `WakeSignal` wakes one waiter), and the caller's for the last items.
    private let wakes: [WakeSignal]
    private let allDone = WakeSignal()

    /// `helpers` threads (at least one) take items as they come.
    public init(helpers: Int, name: String, _ transform: @escaping @Sendable (Input) -> Output) {
        self.transform = transform
        wakes = (0..<max(1, helpers)).map { _ in WakeSignal() }
        for (i, wake) in wakes.enumerated() {
            guard NativeThread.start(name: "\(name)-\(i)", { [self] in help(wake) }) else { break }
        }
    }

    /// Hands `input` over, to be done under `key`.
    public func submit(_ key: Int, _ input: Input) {
        let wasIdle = state.withLock { st -> Bool in
            st.queue.append((key, input))
            return st.next == st.queue.count - 1
        }
        if wasIdle { for wake in wakes { wake.signal() } }
    }

    /// Every item's result by its key, the items not yet taken done on this thread too.
    public func finish() -> [Int: Output] {
        state.withLock { $0.finishing = true }
        for wake in wakes { wake.signal() }
        while let item = take() { done(item.key, transform(item.input)) }
        while !state.withLock({ $0.working == 0 }) { _ = allDone.wait(timeout: 1) }
        return state.withLock { st in
            defer {
                st.results = [:]
                st.queue = []
                st.next = 0
            }
            return st.results
        }
    }

    /// Ends the helpers without doing what is left (the caller's work failed); harmless after
    /// `finish()`. Items already taken are finished by their helpers and dropped.
    public func abandon() {
        state.withLock { st in
            st.finishing = true
            st.queue = []
            st.next = 0
        }
        for wake in wakes { wake.signal() }
    }

    private func help(_ wake: WakeSignal) {
        while true {
            if let item = take() {
                done(item.key, transform(item.input))
            } else if state.withLock({ $0.finishing }) {
                return
            } else {
                _ = wake.wait(timeout: 0.05)
            }
        }
    }

    private func take() -> (key: Int, input: Input)? {
        state.withLock { st in
            guard st.next < st.queue.count else { return nil }
            defer { st.next += 1 }
            st.working += 1
            return st.queue[st.next]
        }
    }

    private func done(_ key: Int, _ output: Output) {
        let last = state.withLock { st -> Bool in
            st.results[key] = output
            st.working -= 1
            return st.working == 0 && st.finishing
        }
        if last { allDone.signal() }
    }
}
