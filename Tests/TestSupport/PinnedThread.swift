import Foundation
import Primitives

/// Runs `body` on a fresh thread pinned to `cpu` and waits for it: the way to be a client
/// whose packets arrive on a known CPU.
public func onCPU<T: Sendable>(_ cpu: Int, _ body: @escaping @Sendable () throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let result = Locked<Result<T, any Error>?>(nil)
    let started = NativeThread.start(name: "test-cpu-\(cpu)") {
        let outcome: Result<T, any Error> =
            NativeThread.pinCurrent(toCPU: cpu) ? Result { try body() } : .failure(PinError.refused(cpu))
        result.withLock { $0 = outcome }
        done.signal()
    }
    guard started else { throw PinError.noThread }
    done.wait()
    guard let outcome = result.withLock({ $0 }) else { throw PinError.noThread }
    return try outcome.get()
}

public enum PinError: Error { case refused(Int), noThread }
