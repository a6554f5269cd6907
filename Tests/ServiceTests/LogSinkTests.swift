import Foundation
import Glibc
import Testing
@testable import Service

@Suite struct LogSinkTests {
    @Test func aStalledStdoutNeverBlocksTheCallerAndDropsAreCounted() throws {
        signal(SIGPIPE, SIG_IGN)  // as feedproxy's main does
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        // The pipe stays open (and unread) for the life of the test process: the sink's
        // writer thread stays blocked in write(), which is the situation under test.
        let sink = LogSink(fd: fds[1])
        let line = String(repeating: "x", count: 99) + "\n"
        let start = Date()
        for _ in 0..<20_000 { sink.enqueue(line) }  // nobody reads the pipe: it fills at 64 KiB
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(sink.droppedLines > 0)
        #expect(sink.droppedLines <= 20_000 - LogSink.capacity)
    }

    @Test func linesArriveWholeAndInOrder() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let sink = LogSink(fd: fds[1])
        let logger = Logger(level: .info, sink: sink)
        for i in 0..<100 { logger.info("line", [("n", .int(i)), ("text", .string("quote \" and \\ and\nnewline"))]) }
        logger.log(.debug, "below the level")
        sink.flush()
        close(fds[1])
        let data = FileHandle(fileDescriptor: fds[0]).readDataToEndOfFile()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 100)
        for (i, l) in lines.enumerated() {
            let object = try JSONSerialization.jsonObject(with: Data(l.utf8)) as? [String: Any]
            #expect(object?["n"] as? Int == i)
            #expect(object?["text"] as? String == "quote \" and \\ and\nnewline")
            #expect(object?["level"] as? String == "info")
        }
    }
}
