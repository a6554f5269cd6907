import Foundation
import Glibc
import Primitives

/// A scripted Redis socket for states a real server cannot be put in on demand:
/// answering nothing, closing mid-conversation, or having lost its scripts.
final class FakeRedis: @unchecked Sendable {
    enum Behaviour: Sendable {
        /// Reads commands and never answers.
        case stall
        /// Closes the connection as soon as a command arrives.
        case close
        /// Answers SCRIPT LOAD with a SHA, EVALSHA with NOSCRIPT, EVAL with :7, anything else +OK.
        case lostScripts
        /// Answers SCRIPT LOAD with a SHA and every other command with what `reply` returns
        /// (raw RESP): replies a real Redis running these scripts would never give.
        case scripted(@Sendable ([String]) -> String)
    }

    let port: Int
    private let listener: Int32
    private let behaviour: Behaviour
    let commands = Locked<[[String]]>([])

    init(_ behaviour: Behaviour) throws {
        self.behaviour = behaviour
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = fd
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                _ = bind(fd, p, len)
                _ = getsockname(fd, p, &len)
            }
        }
        listen(fd, 16)
        port = Int(UInt16(bigEndian: addr.sin_port))
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                Thread.detachNewThread { self.serve(client) }
            }
        }
    }

    var url: String { "redis://127.0.0.1:\(port)" }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { return }
            buffer += chunk[0..<n]
            while let (command, used) = Self.parse(buffer) {
                buffer.removeFirst(used)
                commands.withLock { $0.append(command) }
                switch behaviour {
                case .stall: continue
                case .close: return
                case .lostScripts:
                    let name = command.first?.uppercased() ?? ""
                    let reply: String
                    if name == "SCRIPT" {
                        reply = "$40\r\n" + String(repeating: "a", count: 40) + "\r\n"
                    } else if name == "EVALSHA" {
                        reply = "-NOSCRIPT No matching script. Please use EVAL.\r\n"
                    } else if name == "EVAL" {
                        reply = ":7\r\n"
                    } else {
                        reply = "+OK\r\n"
                    }
                    _ = reply.withCString { write(fd, $0, strlen($0)) }
                case .scripted(let answer):
                    let name = command.first?.uppercased() ?? ""
                    let reply = name == "SCRIPT" ? "$40\r\n" + String(repeating: "a", count: 40) + "\r\n" : answer(command)
                    var bytes = Array(reply.utf8)[...]
                    while !bytes.isEmpty {
                        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                        if n <= 0 { return }
                        bytes = bytes.dropFirst(n)
                    }
                }
            }
        }
    }

    /// One RESP array of bulk strings, and the bytes it used; nil if incomplete.
    static func parse(_ b: [UInt8]) -> ([String], Int)? {
        var i = 0
        func line() -> String? {
            guard let end = b[i...].firstIndex(of: 0x0D), end + 1 < b.count else { return nil }
            let s = String(decoding: b[i..<end], as: UTF8.self)
            i = end + 2
            return s
        }
        guard let head = line(), head.hasPrefix("*"), let count = Int(head.dropFirst()) else { return nil }
        var parts: [String] = []
        for _ in 0..<count {
            guard let len = line(), len.hasPrefix("$"), let n = Int(len.dropFirst()), i + n + 2 <= b.count else { return nil }
            parts.append(String(decoding: b[i..<(i + n)], as: UTF8.self))
            i += n + 2
        }
        return (parts, i)
    }
}
