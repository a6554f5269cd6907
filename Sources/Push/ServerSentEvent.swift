/// The HTML standard's event stream format (text/event-stream): `id:`, `event:` and one
/// `data:` line per line of the payload, a blank line to dispatch; a comment line keeps an idle
/// connection open through proxies; `retry:` is how long a client waits before reconnecting.
package enum ServerSentEvent {
    package static func encode(id: String?, event: String, data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + (id?.utf8.count ?? 0) + 32)
        if let id {
            out += "id: ".utf8
            // An id holds no line break (nor NUL, which a client would drop it for).
            out += id.utf8.filter { $0 != 10 && $0 != 13 && $0 != 0 }
            out.append(10)
        }
        out += "event: ".utf8
        out += event.utf8
        out.append(10)
        var line = data[...]
        while true {
            let end = line.firstIndex { $0 == 10 || $0 == 13 } ?? line.endIndex
            out += "data: ".utf8
            out += line[line.startIndex..<end]
            out.append(10)
            guard end < line.endIndex else { break }
            // CR LF is one break, as the format reads it.
            var next = line.index(after: end)
            if line[end] == 13, next < line.endIndex, line[next] == 10 { next = line.index(after: next) }
            line = line[next...]
        }
        out.append(10)
        return out
    }

    /// A comment: ignored by clients, it keeps proxies from closing an idle stream.
    package static let heartbeat: [UInt8] = Array(": keep-alive\n\n".utf8)

    package static func retry(milliseconds: Int) -> [UInt8] { Array("retry: \(milliseconds)\n\n".utf8) }
}
