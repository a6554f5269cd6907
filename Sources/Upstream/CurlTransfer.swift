import CCurl
import Synchronization
import Primitives

/// One libcurl easy handle and what it has received. Touched by the driver thread
/// (and by libcurl's callbacks on that thread) until it completes.
final class CurlTransfer: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    let request: UpstreamRequest
    let maxBodyBytes: Int
    var continuation: CheckedContinuation<UpstreamResponse, any Error>?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var body: [UInt8] = []
    /// The response's `Content-Length` (0: none yet): the body's room is taken at its first
    /// bytes, up to the cap, so a big feed is not copied at every doubling as it arrives.
    var declaredLength = 0
    var headers: [(String, String)] = []
    var status = 0
    /// The status of each response received (redirects first; 1xx interim ones left out).
    var statuses: [Int] = []
    var exceededBodyLimit = false
    var refusedAddress = false
    let id: UInt64

    static let live = Atomic<Int>(0)

    init?(request: UpstreamRequest, id: UInt64, maxBodyBytes: Int) {
        guard let h = curl_easy_init() else { return nil }
        handle = h
        self.request = request
        self.id = id
        self.maxBodyBytes = maxBodyBytes
        Self.live.add(1, ordering: .relaxed)
    }

    deinit {
        curl_easy_cleanup(handle)
        if let headerList { curl_slist_free_all(headerList) }
        Self.live.subtract(1, ordering: .relaxed)
    }

    // MARK: callbacks (C function pointers; `userdata` is this transfer, unretained)

    static let onBody: ccurl_data_fn = { ptr, size, count, userdata in
        guard let userdata, let ptr else { return 0 }
        let t = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        let n = size * count
        if t.body.count + n > t.maxBodyBytes {
            t.exceededBodyLimit = true
            // A request that takes a cut keeps the body up to the cap.
            if t.request.cutsAtMaxBody {
                let keep = t.maxBodyBytes - t.body.count
                ptr.withMemoryRebound(to: UInt8.self, capacity: keep) { t.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: keep)) }
            }
            return 0  // aborts the transfer with CURLE_WRITE_ERROR
        }
        if t.body.isEmpty, t.declaredLength > n { t.body.reserveCapacity(min(t.declaredLength, t.maxBodyBytes)) }
        ptr.withMemoryRebound(to: UInt8.self, capacity: n) { t.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: n)) }
        return n
    }

    static let onHeader: ccurl_data_fn = { ptr, size, count, userdata in
        guard let userdata, let ptr else { return 0 }
        let t = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
        let n = size * count
        let line = ptr.withMemoryRebound(to: UInt8.self, capacity: n) { String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self) }
        if line.hasPrefix("HTTP/") {
            t.headers.removeAll()  // a new response (after a redirect or 100-continue)
            t.declaredLength = 0
            let fields = line.split(separator: " ", maxSplits: 2)
            if fields.count >= 2, let code = Int(fields[1]), (200...599).contains(code), t.statuses.count < 64 { t.statuses.append(code) }
        } else {
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2, t.headers.count < 200 {
                let value = String(parts[1].trimming { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })
                t.headers.append((String(parts[0]), value))
                // A stranger's number: only digits, and never more room than the cap allows.
                if parts[0].utf8.count == 14, parts[0].lowercased() == "content-length", value.utf8.count <= 12,
                    value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(value)
                {
                    t.declaredLength = length
                }
            }
        }
        return n
    }

    /// Checks the address of the connection a request is about to use, including a
    /// reused one (which never passes through `onOpenSocket`).
    static let onPrerequest: ccurl_prereq_fn = { clientp, primaryIP, _, _, _ in
        guard let clientp else { return Int32(CURL_PREREQFUNC_ABORT) }
        let t = Unmanaged<CurlTransfer>.fromOpaque(clientp).takeUnretainedValue()
        guard t.request.publicAddressesOnly else { return Int32(CURL_PREREQFUNC_OK) }
        let ip = primaryIP.map { String(cString: $0) } ?? ""
        if AddressPolicy.isPublic(ip) || t.request.allowedAddresses.contains(ip) { return Int32(CURL_PREREQFUNC_OK) }
        t.refusedAddress = true
        return Int32(CURL_PREREQFUNC_ABORT)
    }

    /// Checks the address curl is about to connect to (every hop, after DNS), so a
    /// forbidden address never even sees a SYN.
    static let onOpenSocket: ccurl_opensocket_fn = { clientp, _, address in
        guard let clientp, let address else { return CURL_SOCKET_BAD }
        let t = Unmanaged<CurlTransfer>.fromOpaque(clientp).takeUnretainedValue()
        if t.request.publicAddressesOnly {
            var text = [CChar](repeating: 0, count: 64)
            let family = ccurl_sockaddr_text(address, &text, Int32(text.count))
            let ip = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if family < 0 || !(AddressPolicy.isPublic(ip) || t.request.allowedAddresses.contains(ip)) {
                t.refusedAddress = true
                return CURL_SOCKET_BAD
            }
        }
        return ccurl_open_socket(address)
    }
}
