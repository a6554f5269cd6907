import Foundation
import Primitives
import TestSupport
import Testing

/// Long CPU work runs on the workers' own threads, not on the cooperative pool, and its
/// result or typed error comes back to the caller.
@Suite(.offPool) struct CPUWorkersTests {
    enum Refused: Error, Equatable { case no }

    static func threadName() -> String {
        // The kernel's name for this thread (what NativeThread.start set).
        guard let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) else { return "" }
        return comm.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func workRunsOnTheWorkersThreadsAndItsResultComesBack() async throws {
        let workers = CPUWorkers(threads: 2, name: "t-cpu")
        let names = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { await workers.run { Self.threadName() } } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(names.count == 8 && names.allSatisfy { $0.hasPrefix("t-cpu-") }, "\(names)")
        await #expect(throws: Refused.no) { try await workers.run { () throws(Refused) -> Int in throw .no } }
        #expect(await workers.run { 6 * 7 } == 42)
        // Small work stays where it is; long work goes to the workers.
        #expect(!(await workers.run(over: 1024) { Self.threadName() }).hasPrefix("t-cpu-"))
        #expect(await workers.run(over: CPUWorkers.longWorkBytes) { Self.threadName() }.hasPrefix("t-cpu-"))
    }
}
