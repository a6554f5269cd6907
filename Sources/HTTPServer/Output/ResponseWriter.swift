import Primitives

/// Serialises a response head and body into a connection's output buffer, so that
/// head and body leave in one `send` (no split writes, no Nagle stalls).
struct ResponseWriter {
    let serverHeader: [UInt8]

    init(serverName: String) {
        serverHeader = Array("Server: \(serverName)\r\n".utf8)
    }

    /// Appends the response to `core`'s request; returns the number of body bytes it carries.
    func append(
        _ response: Response, to core: CoreRequestContext, gzip: Bool, headOnly: Bool, keepAlive: Bool, version: HTTPVersion, date: [UInt8],
        into out: inout OutputQueue, streaming: Bool = false
    ) -> Int {
        let status = response.status
        let representation = response.representation
        var body = representation.body
        var encoded = false
        // The pre-compressed variant is a representation of its own, with its own lines.
        var variant = false
        if gzip && !streaming && !StatusReason.forbidsBody(status) {
            if let pre = representation.gzippedBody {
                body = pre
                encoded = true
                variant = true
            } else if representation.compressible && body.count >= 1024, let z = Gzip.compress(body) {
                body = z
                encoded = true
            }
        }
        if let line = StatusReason.line(status) {
            out.append(literal: line)
        } else {
            out.append(literal: "HTTP/1.1 ")
            out.append(decimal: status)
            out.append(literal: " \r\n")  // RFC 9112 §4: the reason phrase may be empty, its space not
        }
        out.append(literal: "Date: ")
        out.append(contentsOf: date)
        out.append(literal: "\r\n")
        out.append(contentsOf: serverHeader)
        if streaming {
            // Its length is not known: chunks (HTTP/1.1), or until the connection closes (1.0).
            if version != .http10 { out.append(literal: "Transfer-Encoding: chunked\r\n") }
        } else if !StatusReason.forbidsBody(status) {
            out.append(literal: "Content-Length: ")
            out.append(decimal: body.count)
            out.append(literal: "\r\n")
        }
        if !keepAlive {
            out.append(literal: "Connection: close\r\n")
        } else if version == .http10 {
            out.append(literal: "Connection: keep-alive\r\n")
        }
        out.append(contentsOf: response.addedHeaders)
        if core.generatedID != 0 {
            out.append(literal: "X-Request-ID: ")
            out.append(hex: core.generatedID, digits: RequestIDGenerator.digits(core.generatedID))
            out.append(literal: "\r\n")
        } else if !core.givenID.isEmpty {
            out.append(literal: "X-Request-ID: ")
            out.append(utf8: core.givenID)
            out.append(literal: "\r\n")
        }
        if representation.compressible || representation.gzippedBody != nil {
            out.append(literal: "Vary: Accept-Encoding\r\n")
        }
        if encoded { out.append(literal: "Content-Encoding: gzip\r\n") }
        for field in response.headers.fields {
            out.append(utf8: field.name)
            out.append(literal: ": ")
            out.append(utf8: field.value)
            out.append(literal: "\r\n")
        }
        if let age = response.age {
            out.append(literal: "Age: ")
            out.append(decimal: age)
            out.append(literal: "\r\n")
        }
        out.append(contentsOf: response.constantHeaders)
        out.append(contentsOf: response.renderedHeaders)
        out.append(contentsOf: variant ? representation.gzipHeaderLines : representation.headerLines)
        out.append(literal: "\r\n")
        guard !headOnly, !streaming, !StatusReason.forbidsBody(status) else { return 0 }
        out.appendBody(body)
        return body.count
    }
}
