/// Status lines, whole: one literal appended per response, no number formatted.
enum StatusReason {
    /// `HTTP/1.1 200 OK\r\n`; nil for a status without a phrase here (written from its number).
    static func line(_ status: Int) -> StaticString? {
        switch status {
        case 100: return "HTTP/1.1 100 Continue\r\n"
        case 200: return "HTTP/1.1 200 OK\r\n"
        case 201: return "HTTP/1.1 201 Created\r\n"
        case 204: return "HTTP/1.1 204 No Content\r\n"
        case 301: return "HTTP/1.1 301 Moved Permanently\r\n"
        case 302: return "HTTP/1.1 302 Found\r\n"
        case 304: return "HTTP/1.1 304 Not Modified\r\n"
        case 307: return "HTTP/1.1 307 Temporary Redirect\r\n"
        case 400: return "HTTP/1.1 400 Bad Request\r\n"
        case 404: return "HTTP/1.1 404 Not Found\r\n"
        case 405: return "HTTP/1.1 405 Method Not Allowed\r\n"
        case 408: return "HTTP/1.1 408 Request Timeout\r\n"
        case 413: return "HTTP/1.1 413 Content Too Large\r\n"
        case 414: return "HTTP/1.1 414 URI Too Long\r\n"
        case 417: return "HTTP/1.1 417 Expectation Failed\r\n"
        case 429: return "HTTP/1.1 429 Too Many Requests\r\n"
        case 431: return "HTTP/1.1 431 Request Header Fields Too Large\r\n"
        case 500: return "HTTP/1.1 500 Internal Server Error\r\n"
        case 501: return "HTTP/1.1 501 Not Implemented\r\n"
        case 502: return "HTTP/1.1 502 Bad Gateway\r\n"
        case 503: return "HTTP/1.1 503 Service Unavailable\r\n"
        case 504: return "HTTP/1.1 504 Gateway Timeout\r\n"
        case 505: return "HTTP/1.1 505 HTTP Version Not Supported\r\n"
        default: return nil
        }
    }

    /// `true` for statuses that never carry a body.
    static func forbidsBody(_ status: Int) -> Bool {
        (100..<200).contains(status) || status == 204 || status == 304
    }
}
