/// Serialises a response head and body into a connection's output buffer, so that
/// head and body leave in one `send` (no split writes, no Nagle stalls).
struct ResponseWriter {
    let serverHeader: [UInt8]
    let corsHeader: [UInt8]?

    init(serverName: String, cors: CORSPolicy) {
        serverHeader = Array("Server: \(serverName)\r\n".utf8)
        // Page scripts may read only safelisted headers unless exposed; the application names its own.
        corsHeader = cors.origin.map {
            Array("Access-Control-Allow-Origin: \($0)\r\nAccess-Control-Expose-Headers: \(cors.exposedHeaders.joined(separator: ", "))\r\n".utf8)
        }
    }

    /// Appends the response; returns the number of body bytes it carries.
    func append(
        _ response: Response, requestID: String, gzip: Bool, headOnly: Bool, keepAlive: Bool, version: HTTPVersion, date: [UInt8], into out: inout OutputQueue
    ) -> Int {
        let status = response.status
        var body = response.body
        var encoded = false
        if gzip && !StatusReason.forbidsBody(status) {
            if let pre = response.gzippedBody {
                body = pre
                encoded = true
            } else if response.compressible && response.body.count >= 1024, let z = Gzip.compress(response.body) {
                body = z
                encoded = true
            }
        }
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        appendInt(status, &out)
        out.append(0x20)
        out.append(contentsOf: StatusReason.phrase(status).utf8)
        out.append(contentsOf: "\r\nDate: ".utf8)
        out.append(contentsOf: date)
        out.append(contentsOf: "\r\n".utf8)
        out.append(contentsOf: serverHeader)
        if !StatusReason.forbidsBody(status) {
            out.append(contentsOf: "Content-Length: ".utf8)
            appendInt(body.count, &out)
            out.append(contentsOf: "\r\n".utf8)
        }
        if !keepAlive {
            out.append(contentsOf: "Connection: close\r\n".utf8)
        } else if version == .http10 {
            out.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        if let corsHeader { out.append(contentsOf: corsHeader) }
        if !requestID.isEmpty {
            out.append(contentsOf: "X-Request-ID: ".utf8)
            out.append(contentsOf: requestID.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        if response.compressible || response.gzippedBody != nil {
            out.append(contentsOf: "Vary: Accept-Encoding\r\n".utf8)
        }
        if encoded { out.append(contentsOf: "Content-Encoding: gzip\r\n".utf8) }
        for field in response.headers.fields {
            out.append(contentsOf: field.name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: field.value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: response.renderedHeaders)
        out.append(contentsOf: "\r\n".utf8)
        guard !headOnly, !StatusReason.forbidsBody(status) else { return 0 }
        out.appendBody(body)
        return body.count
    }

    private func appendInt(_ value: Int, _ out: inout OutputQueue) {
        if value < 10 {
            out.append(UInt8(48 + value))
            return
        }
        var digits:
            (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = value
        var count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            while n > 0 && count < 20 {
                d[19 - count] = UInt8(48 + n % 10)
                n /= 10
                count += 1
            }
            out.append(contentsOf: d[(20 - count)...])
        }
    }
}
