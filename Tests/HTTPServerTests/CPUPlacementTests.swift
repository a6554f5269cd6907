import Foundation
import HTTPServer
import Primitives
import Testing
import TestSupport

/// Loops pinned to CPUs, connections steered to the loop of the CPU their packets arrive on,
/// and the balance that keeps steering from piling everything onto one loop.
@Suite(.serialized, .offPool) struct CPUPlacementTests {
    @Test func planNeedsExactlyOneLoopPerAllowedCPU() {
        #expect(CPUPlacement.plan(loops: 2, allowedCPUs: [0, 1])?.cpus == [0, 1])
        #expect(CPUPlacement.plan(loops: 2, allowedCPUs: [5, 2])?.cpus == [2, 5])
        #expect(CPUPlacement.plan(loops: 3, allowedCPUs: [4, 9, 6])?.cpus == [4, 6, 9])
        #expect(CPUPlacement.plan(loops: 2, allowedCPUs: [-1, 0]) == nil)
        #expect(CPUPlacement.plan(loops: 1, allowedCPUs: [0]) == nil)
        #expect(CPUPlacement.plan(loops: 2, allowedCPUs: [0, 1, 2, 3]) == nil)
        #expect(CPUPlacement.plan(loops: 4, allowedCPUs: [0, 1]) == nil)
        #expect(CPUPlacement.plan(loops: 2, allowedCPUs: []) == nil)
    }

    /// What each request's loop was, in order.
    final class LoopLog: Middleware {
        let loops = Locked<[Int]>([])
        func ended(_ context: BasicRequestContext, _ outcome: RequestOutcome) { loops.withLock { $0.append(outcome.loop) } }
        func take() -> [Int] {
            loops.withLock { taken in
                defer { taken = [] }; return taken
            }
        }
    }

    static func configuration(affinity: Bool = true) -> ServerConfiguration {
        var config = ServerConfiguration()
        config.host = "127.0.0.1"
        config.port = 0
        config.threads = 0
        config.cpuAffinity = affinity
        return config
    }

    static func start(_ log: LoopLog, affinity: Bool = true) throws -> Server {
        var router = Router<BasicRequestContext>()
        router.get("/hello") { _ in .response(.json(Array("{}".utf8))) }
        // The scheduling policy of the loop that serves the request.
        router.get("/policy") { _ in .response(.json(Array("\(sched_getscheduler(0))".utf8))) }
        router.use(log)
        let server = Server(configuration: configuration(affinity: affinity), router: router)
        try server.start()
        return server
    }

    static func get(_ client: RawClient) throws {
        try client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 200)
    }

    static let multicore = NativeThread.processorCount >= 2
    /// Linux's SCHED_BATCH (glibc declares it only under _GNU_SOURCE, which Swift's Glibc lacks).
    static let schedBatch: Int32 = 3

    @Test(.enabled(if: multicore)) func connectionsAreServedByTheLoopOfTheClientsCPU() async throws {
        try await offPool {
            let log = LoopLog()
            let server = try Self.start(log)
            defer { server.shutdown() }
            let placement = try #require(server.placement)
            #expect(placement.cpus.count == NativeThread.processorCount)
            for loop in [1, 0] {
                let clients = try onCPU(placement.cpus[loop]) {
                    try (0..<3).map { _ in
                        let c = try RawClient(port: server.port)
                        try Self.get(c)
                        return c
                    }
                }
                #expect(log.take() == [loop, loop, loop], "clients on CPU \(placement.cpus[loop])")
                withExtendedLifetime(clients) {}
            }
        }
    }

    @Test(.enabled(if: multicore)) func anIdleConnectionFollowsItsClientToAnotherCPU() async throws {
        try await offPool {
            let log = LoopLog()
            let server = try Self.start(log)
            defer { server.shutdown() }
            let placement = try #require(server.placement)
            let client = try onCPU(placement.cpus[0]) {
                let c = try RawClient(port: server.port)
                try Self.get(c)
                return c
            }
            #expect(log.take() == [0])
            // The client's thread now runs on the other CPU: the connection follows it (checked
            // every 16 responses; a check can still see the loop's own CPU when the kernel sent
            // an ACK from there, so allow a few).
            try onCPU(placement.cpus[1]) {
                for _ in 0..<64 where server.connectionsMoved == 0 { try Self.get(client) }
                for _ in 0..<4 { try Self.get(client) }
            }
            let loops = log.take()
            // Where it started is checked above; the move may come at the first check after the
            // switch, so the first answer here may already be the new loop's.
            #expect(loops.suffix(4).allSatisfy { $0 == 1 }, "\(loops)")
            #expect(server.connectionsMoved == 1)
            #expect(server.connectionsPerLoop[1] == 1 && server.connectionsPerLoop.reduce(0, +) == 1)
        }
    }

    @Test(.enabled(if: multicore)) func steeringNeverPilesEveryConnectionOntoOneLoop() async throws {
        try await offPool {
            let log = LoopLog()
            let server = try Self.start(log)
            defer { server.shutdown() }
            let placement = try #require(server.placement)
            // 40 clients, all on one CPU (a single-queue NIC looks the same): accepted on loop 0,
            // handed over past the slack, and not pulled back by the follow-the-CPU check.
            let clients = try onCPU(placement.cpus[0]) {
                try (0..<40).map { _ in
                    let c = try RawClient(port: server.port)
                    for _ in 0..<17 { try Self.get(c) }
                    return c
                }
            }
            let loads = server.connectionsPerLoop
            #expect(loads.reduce(0, +) == 40)
            let busiest = loads.max() ?? 0, least = loads.min() ?? 0
            #expect(least > 0 && busiest - least <= max(4, busiest / 8) + 1, "\(loads)")
            #expect(Set(log.take()).count >= 2, "more than one loop served")
            withExtendedLifetime(clients) {}
        }
    }

    @Test(.enabled(if: multicore)) func poolThreadsStartedByAPinnedLoopGetEveryCPUBack() async throws {
        try await offPool {
            let log = LoopLog()
            var router = Router<BasicRequestContext>()
            // Each handler reports the CPUs its pool thread may use and its scheduling policy.
            router.get("/cpus") { _ in .deferred { _ in .json(Array("\(NativeThread.currentThreadCPUCount) \(sched_getscheduler(0))".utf8)) } }
            router.use(log)
            let server = Server(configuration: Self.configuration(), router: router)
            try server.start()
            defer { server.shutdown() }
            let placement = try #require(server.placement)
            let c = try RawClient(port: server.port)
            for _ in 0..<8 {
                try c.send("GET /cpus HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try c.readResponse().text == "\(placement.cpus.count) \(SCHED_OTHER)")
            }
            // The primitive itself: a thread pinned to one CPU and batch-scheduled, widened again.
            let widened = try onCPU(placement.cpus[0]) { () -> (Int, Int, Int, Int32, Int32) in
                NativeThread.batchScheduling()
                let pinned = (NativeThread.currentThreadCPUCount, NativeThread.processorCount, sched_getscheduler(0))
                NativeThread.allowOnce(cpus: placement.cpus.map(Int32.init))
                return (pinned.0, pinned.1, NativeThread.currentThreadCPUCount, pinned.2, sched_getscheduler(0))
            }
            // Pinned, the thread sees one CPU while the process still counts all of them.
            #expect(widened == (1, placement.cpus.count, placement.cpus.count, Self.schedBatch, Int32(SCHED_OTHER)))
        }
    }

    /// The policy of the loop that answers a request from `client` (asked on the loop itself:
    /// other tests' servers in this process have loops of the same name).
    static func loopPolicy(_ client: RawClient) throws -> Int32? {
        try client.send("GET /policy HTTP/1.1\r\nHost: x\r\n\r\n")
        return Int32(try client.readResponse().text)
    }

    /// Pinned loops are batch-scheduled; loops left to the kernel keep the default policy.
    @Test(.enabled(if: multicore)) func pinnedLoopsAreBatchScheduled() async throws {
        try await offPool {
            let pinned = try Self.start(LoopLog(), affinity: true)
            defer { pinned.shutdown() }
            let placement = try #require(pinned.placement)
            for cpu in placement.cpus {
                // A client on each CPU is served by that CPU's loop.
                let policy = try onCPU(cpu) { try Self.loopPolicy(RawClient(port: pinned.port)) }
                #expect(policy == Self.schedBatch, "the loop of CPU \(cpu)")
            }
            let free = try Self.start(LoopLog(), affinity: false)
            defer { free.shutdown() }
            for _ in 0..<4 { #expect(try Self.loopPolicy(RawClient(port: free.port)) == Int32(SCHED_OTHER)) }
        }
    }

    @Test func withoutAffinityTheKernelHashSpreadsConnections() async throws {
        try await offPool {
            let server = try Self.start(LoopLog(), affinity: false)
            defer { server.shutdown() }
            #expect(server.placement == nil)
            let c = try RawClient(port: server.port)
            try Self.get(c)
        }
    }
}
