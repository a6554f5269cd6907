import CCurl
import Primitives

/// A blocking HTTP POST for one background thread (the trace exporter): its own easy handle,
/// kept between posts so the collector's connection is reused. Never on an event loop.
/// Redirects are not followed; the answer's body is read and dropped (at most 64 KiB).
public final class CurlPost {
    public struct Answer: Sendable, Equatable {
        public let status: Int
        /// `Retry-After` in seconds, when the answer has one in that form.
        public let retryAfter: Double?
    }

    private let handle: UnsafeMutableRawPointer
    private var retryAfter: Double?
    private var received = 0

    public init?() {
        _ = ccurl_global_init()
        guard let h = curl_easy_init() else { return nil }
        handle = h
    }

    deinit { curl_easy_cleanup(handle) }

    /// nil `Answer`: the post did not get an answer (refused, timed out); the reason instead.
    public func send(url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int) -> Result<Answer, PostFailure> {
        retryAfter = nil
        received = 0
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in headers + [("Expect", "")] { list = curl_slist_append(list, "\(name): \(value)") }
        defer { curl_slist_free_all(list) }
        let h = handle
        let this = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_setopt_string(h, CURLOPT_URL, url)
        _ = ccurl_setopt_string(h, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = ccurl_setopt_long(h, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_setopt_long(h, CURLOPT_FOLLOWLOCATION, 0)
        _ = ccurl_setopt_long(h, CURLOPT_TIMEOUT_MS, max(timeoutMs, 1))
        _ = ccurl_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, max(min(timeoutMs, 5000), 1))
        _ = ccurl_setopt_pointer(h, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list))
        _ = ccurl_setopt_data_fn(h, CURLOPT_WRITEFUNCTION, Self.onBody)
        _ = ccurl_setopt_pointer(h, CURLOPT_WRITEDATA, this)
        _ = ccurl_setopt_data_fn(h, CURLOPT_HEADERFUNCTION, Self.onHeader)
        _ = ccurl_setopt_pointer(h, CURLOPT_HEADERDATA, this)
        let code = body.withUnsafeBytes { bytes -> CURLcode in
            _ = ccurl_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, Int64(bytes.count))
            _ = ccurl_setopt_pointer(h, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return curl_easy_perform(h)
        }
        _ = ccurl_setopt_pointer(h, CURLOPT_POSTFIELDS, nil)
        _ = ccurl_setopt_pointer(h, CURLOPT_HTTPHEADER, nil)
        guard code == CURLE_OK else { return .failure(code == CURLE_OPERATION_TIMEDOUT ? .timeout : .unreachable(String(cString: curl_easy_strerror(code)))) }
        var status = 0
        ccurl_getinfo_long(h, CURLINFO_RESPONSE_CODE, &status)
        return .success(Answer(status: status, retryAfter: retryAfter))
    }

    public enum PostFailure: Error, Sendable, Equatable {
        case timeout
        case unreachable(String)
    }

    static let onBody: ccurl_data_fn = { _, size, count, userdata in
        guard let userdata else { return 0 }
        let post = Unmanaged<CurlPost>.fromOpaque(userdata).takeUnretainedValue()
        post.received += size * count
        return post.received <= 64 << 10 ? size * count : 0
    }

    static let onHeader: ccurl_data_fn = { ptr, size, count, userdata in
        guard let userdata, let ptr else { return 0 }
        let post = Unmanaged<CurlPost>.fromOpaque(userdata).takeUnretainedValue()
        let n = size * count
        let line = ptr.withMemoryRebound(to: UInt8.self, capacity: n) { String(decoding: UnsafeBufferPointer(start: $0, count: min(n, 256)), as: UTF8.self) }
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2, parts[0].lowercased() == "retry-after" {
            let value = parts[1].trimming { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
            if value.utf8.count <= 9, let seconds = Int(value), seconds >= 0 { post.retryAfter = Double(seconds) }
        }
        return n
    }
}
