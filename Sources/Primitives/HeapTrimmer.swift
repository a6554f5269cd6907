import CSystem
import Glibc
import Synchronization

/// Gives the heap's free pages back to the system, every `interval` seconds, on a thread of
/// its own. glibc's malloc returns memory by itself only from the top of each arena: what a
/// burst freed below live allocations (10,000 streams' first pages, a storm's answers) stays
/// resident, and RSS, which a pod's memory limit counts, keeps the burst's height for good
/// (about 1.4 KiB a stream at 10,000 streams). `malloc_trim(0)` releases every whole free
/// page inside the arenas (the allocator keeps the chunks; a page used again faults back in).
/// A pass walks the arenas' free lists under their locks: at this interval, a few
/// milliseconds of a core a minute.
public final class HeapTrimmer: Sendable {
    public static let interval = 10.0
    /// The process's one trimmer (started by the executable; tests start none).
    public static let shared = HeapTrimmer()

    private let started = Atomic<Bool>(false)
    private let released = Atomic<Int>(0)

    private init() {}

    /// Starts the passes (once; later calls do nothing).
    public func start() {
        guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        _ = NativeThread.start(name: "heap-trimmer") { [self] in
            while true {
                usleep(UInt32(Self.interval * 1_000_000))
                trimNow()
            }
        }
    }

    /// One pass now; true when it gave memory back.
    @discardableResult
    public func trimNow() -> Bool {
        let gave = csys_heap_trim() == 1
        if gave { released.add(1, ordering: .relaxed) }
        return gave
    }

    /// Passes that gave memory back (`feedproxy_heap_trims_total`).
    public var passesThatReleased: Int { released.load(ordering: .relaxed) }
}
