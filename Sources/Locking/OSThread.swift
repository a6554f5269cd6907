import Glibc

// glibc's pthread_setname_np is a GNU extension the Glibc module does not import.
@_silgen_name("pthread_setname_np")
private func setThreadName(_ thread: pthread_t, _ name: UnsafePointer<CChar>) -> Int32

/// A detached OS thread running a closure: what the event loops and the log writer
/// need from a thread, without Foundation's `Thread`.
public enum OSThread {
    private final class Box {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a new detached thread; false if the system refused one.
    @discardableResult
    public static func start(name: String, stackSize: Int = 0, _ body: @escaping @Sendable () -> Void) -> Bool {
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        if stackSize > 0 { pthread_attr_setstacksize(&attr, stackSize) }
        let box = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, &attr,
            { raw in
                guard let raw else { return nil }
                let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
                // Linux limits thread names to 15 bytes.
                _ = setThreadName(pthread_self(), String(box.name.utf8.prefix(15)) ?? "")
                box.body()
                return nil
            }, box)
        if rc != 0 { Unmanaged<Box>.fromOpaque(box).release() }
        return rc == 0
    }
}
