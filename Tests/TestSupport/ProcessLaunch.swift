import Foundation
import Primitives

/// Foundation's `Process.run()` on Linux is not safe to call from several threads at once
/// (it crashed copying its arguments when parallel tests launched redis-cli together): every
/// launch in the tests goes through this one lock.
public func launchProcess(_ process: Process) throws {
    try processLaunches.withLock { _ in try process.run() }
}

private let processLaunches = Locked(())
