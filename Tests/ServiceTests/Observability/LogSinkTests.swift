import Observability
import Primitives
import Foundation
import Glibc
import HTTPServer
import Testing
import TestSupport
@testable import Service

@Suite(.offPool) struct LogSinkTests {
    @Test func aStalledStdoutNeverBlocksTheCallerAndDropsAreCounted() throws {
        signal(SIGPIPE, SIG_IGN)  // as feedproxy's main does
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        // The pipe stays open (and unread) for the life of the test process: the sink's
        // writer thread stays blocked in write(), which is the situation under test.
        let sink = LogSink(fd: fds[1], lanes: 2)
        let payload = String(repeating: "x", count: 99)
        let lines = 100_000
        let start = Date()
        for _ in 0..<lines { sink.write(lane: 0, level: .info) { LogLine.appendString(payload, into: &$0) } }
        #expect(Date().timeIntervalSince(start) < 5)
        // Each line is over 150 bytes: what was accepted fits the lane's bound plus the pipe.
        let accepted = lines - sink.droppedLines
        #expect(sink.droppedLines > 0)
        #expect(accepted * 150 <= LogSink.laneCapacity + 2 * LogSink.batchBytes + 65_536)
        // Another lane is not starved by the full one.
        let before = sink.droppedLines
        sink.write(lane: 1, level: .info) { LogLine.appendString("other loop", into: &$0) }
        #expect(sink.droppedLines == before)
    }

    @Test func linesArriveWholeAndInOrder() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let sink = LogSink(fd: fds[1])
        let logger = Logger(level: .info, sink: sink)
        for i in 0..<100 { logger.info("line", [("n", .int(i)), ("text", .string("quote \" and \\ and\nnewline\u{1}")), ("ms", .double(1.5))]) }
        logger.log(.debug, "below the level")
        sink.flush()
        close(fds[1])
        let data = FileHandle(fileDescriptor: fds[0]).readDataToEndOfFile()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 100)
        for (i, l) in lines.enumerated() {
            let object = try JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any]
            #expect(object?["n"] as? Int == i)
            #expect(object?["text"] as? String == "quote \" and \\ and\nnewline\u{1}")
            #expect(object?["level"] as? String == "info")
            #expect(object?["ms"] as? Double == 1.5)
            let ts = object?["ts"] as? String ?? ""
            #expect(ts.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil, "\(ts)")
        }
    }

    @Test func eachLoopWritesItsOwnLaneAndNothingIsLostOrTorn() async throws {
        try await offPool {
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer { close(fds[0]) }
            // Large enough that the reader below must drain while writers run.
            let sink = LogSink(fd: fds[1], lanes: 3)
            let received = LockedBox(Data())
            let readerDone = DispatchSemaphore(value: 0)
            let readFD = fds[0]
            DispatchQueue.global().async {
                received.set(FileHandle(fileDescriptor: readFD).readDataToEndOfFile())
                readerDone.signal()
            }
            DispatchQueue.concurrentPerform(iterations: 3) { lane in
                for n in 0..<5_000 {
                    sink.write(lane: lane, level: .info) { out in
                        LogLine.appendString("request", into: &out)
                        LogLine.appendKey("lane", into: &out)
                        out.append(decimal: lane)
                        LogLine.appendKey("n", into: &out)
                        out.append(decimal: n)
                    }
                }
            }
            sink.flush()
            close(fds[1])
            readerDone.wait()
            let text = String(decoding: received.get(), as: UTF8.self)
            var next = [0, 0, 0]
            for line in text.split(separator: "\n") {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let lane = try #require(object["lane"] as? Int)
                // Per lane the order is kept; lanes interleave in batches.
                #expect(object["n"] as? Int == next[lane])
                next[lane] += 1
            }
            #expect(next == [5_000, 5_000, 5_000])
            #expect(sink.droppedLines == 0)
        }
    }

    @Test func aQuietLaneIsWrittenWithinTheFlushInterval() async throws {
        try await offPool {
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer {
                close(fds[0])
                close(fds[1])
            }
            let sink = LogSink(fd: fds[1], lanes: 2)
            sink.write(lane: 0, level: .warn) { LogLine.appendString("one line, no flush", into: &$0) }
            var poll = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            // No size trigger and no explicit flush: the timer (100 ms) writes it.
            #expect(Glibc.poll(&poll, 1, 1000) == 1)
            var buf = [UInt8](repeating: 0, count: 512)
            let n = read(fds[0], &buf, buf.count)
            #expect(String(decoding: buf.prefix(max(n, 0)), as: UTF8.self).hasSuffix("\"level\":\"warn\",\"msg\":\"one line, no flush\"}\n"))
        }
    }

    @Test func numbersAndEscapesRenderExactly() {
        func render(_ body: (inout [UInt8]) -> Void) -> String {
            var out: [UInt8] = []
            body(&out)
            return String(decoding: out, as: UTF8.self)
        }
        #expect(render { LogLine.appendMillis(12.3456, into: &$0) } == "12.346")
        #expect(render { LogLine.appendMillis(0.0004, into: &$0) } == "0.000")
        #expect(render { LogLine.appendMillis(-1.5, into: &$0) } == "-1.500")
        #expect(render { LogLine.appendMillis(.nan, into: &$0) } == "null")
        #expect(render { LogLine.appendMillis(.infinity, into: &$0) } == "null")
        #expect(render { LogLine.appendString("a\u{0}b\u{1f}\t\"é", into: &$0) } == #""a\u0000b\u001f\t\"é""#)
        #expect(render { LogLine.appendAddress(IPAddress(ipv4: 0xC000_0207), into: &$0) } == #""192.0.2.7""#)
        #expect(render { LogLine.appendAddress(IPAddress(ipv4: 0xFFFF_FF00), into: &$0) } == #""255.255.255.0""#)
        #expect(render { LogLine.appendAddress(IPAddress("2001:db8::1") ?? IPAddress(ipv4: 0), into: &$0) } == #""2001:db8::1""#)
    }
}

private final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func set(_ v: T) { lock.withLock { value = v } }
    func get() -> T { lock.withLock { value } }
}
