import CCurl
import Synchronization
import Primitives

/// Runs libcurl's multi interface on one dedicated thread: any number of transfers
/// in flight without a thread each, and one shared connection/DNS/TLS-session cache.
final class CurlDriver: @unchecked Sendable {
    struct Settings: Sendable {
        var connectTimeoutMs = 2000
        var userAgent = "FeedProxy/1.0"
        var maxHostConnections = 8
        /// Every upstream request goes through this proxy; nil: none, whatever
        /// `http_proxy`/`https_proxy`/`ALL_PROXY` in the environment say.
        var proxy: String?
    }

    private enum Command {
        case add(CurlTransfer)
        case cancel(UInt64)
    }

    private let multi: UnsafeMutableRawPointer
    /// TLS sessions and DNS answers outlive any one connection (resumed handshakes).
    private let share: UnsafeMutableRawPointer?
    private let settings: Settings
    private let inbox = Locked<[Command]>([])
    private let nextID = Atomic<UInt64>(0)
    private let stopping = Atomic<Bool>(false)
    // Driver-thread state.
    private var active: [UInt64: CurlTransfer] = [:]

    private static let globalInit: Void = { _ = ccurl_global_init() }()

    init(settings: Settings) throws(UpstreamError) {
        _ = Self.globalInit
        guard let m = curl_multi_init() else { throw .other("curl_multi_init failed") }
        multi = m
        share = ccurl_share_new()
        self.settings = settings
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, settings.maxHostConnections)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 64)
        guard NativeThread.start(name: "curl-driver", { [self] in run() }) else { throw .other("cannot start the curl driver thread") }
    }

    /// Live easy handles (a leak shows up here).
    static var liveHandles: Int { CurlTransfer.live.load(ordering: .relaxed) }

    func perform(_ request: UpstreamRequest, timeoutMs: Int, maxBodyBytes: Int) async throws -> UpstreamResponse {
        let id = nextID.add(1, ordering: .relaxed).newValue
        if Task.isCancelled { throw UpstreamError.cancelled }
        guard let transfer = CurlTransfer(request: request, id: id, maxBodyBytes: maxBodyBytes) else { throw UpstreamError.other("easy init") }
        try configure(transfer, timeoutMs: timeoutMs)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.continuation = continuation
                submit(.add(transfer))
            }
        } onCancel: {
            submit(.cancel(id))
        }
    }

    private func submit(_ command: Command) {
        inbox.withLock { $0.append(command) }
        curl_multi_wakeup(multi)
    }

    private func configure(_ t: CurlTransfer, timeoutMs: Int) throws {
        let h = t.handle
        let r = t.request
        guard r.target.isHTTP else { throw UpstreamError.protocolNotAllowed }
        var ok = ccurl_setopt_string(h, CURLOPT_URL, r.url) == CURLE_OK
        ok = ok && ccurl_setopt_string(h, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK
        ok = ok && ccurl_setopt_string(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") == CURLE_OK
        guard ok else { throw UpstreamError.invalidRequest("bad URL") }
        _ = ccurl_setopt_long(h, CURLOPT_NOSIGNAL, 1)
        // The transfer id rides along, so a finished easy handle maps back in O(1).
        _ = ccurl_setopt_pointer(h, CURLOPT_PRIVATE, UnsafeMutableRawPointer(bitPattern: UInt(t.id)))
        if let share { _ = ccurl_setopt_pointer(h, CURLOPT_SHARE, share) }
        // An empty proxy turns libcurl's environment lookup off: a proxy the operator did not
        // configure would also be the address the SSRF check sees instead of the feed's.
        _ = ccurl_setopt_string(h, CURLOPT_PROXY, settings.proxy ?? "")
        _ = ccurl_setopt_long(h, CURLOPT_FOLLOWLOCATION, 1)
        _ = ccurl_setopt_long(h, CURLOPT_MAXREDIRS, 3)
        _ = ccurl_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, settings.connectTimeoutMs)
        _ = ccurl_setopt_long(h, CURLOPT_TIMEOUT_MS, timeoutMs)
        // A request that takes a cut reads the start of a file however large it says it is.
        if !r.cutsAtMaxBody { _ = ccurl_setopt_off(h, CURLOPT_MAXFILESIZE_LARGE, Int64(t.maxBodyBytes)) }
        _ = ccurl_setopt_string(h, CURLOPT_ACCEPT_ENCODING, "")  // every coding curl supports
        _ = ccurl_setopt_string(h, CURLOPT_USERAGENT, settings.userAgent)
        _ = ccurl_setopt_long(h, CURLOPT_TCP_KEEPALIVE, 1)
        _ = ccurl_setopt_long(h, CURLOPT_TCP_NODELAY, 1)
        let me = Unmanaged.passUnretained(t).toOpaque()
        _ = ccurl_setopt_data_fn(h, CURLOPT_WRITEFUNCTION, CurlTransfer.onBody)
        _ = ccurl_setopt_pointer(h, CURLOPT_WRITEDATA, me)
        _ = ccurl_setopt_data_fn(h, CURLOPT_HEADERFUNCTION, CurlTransfer.onHeader)
        _ = ccurl_setopt_pointer(h, CURLOPT_HEADERDATA, me)
        _ = ccurl_setopt_opensocket_fn(h, CurlTransfer.onOpenSocket)
        _ = ccurl_setopt_pointer(h, CURLOPT_OPENSOCKETDATA, me)
        _ = ccurl_setopt_prereq_fn(h, CurlTransfer.onPrerequest)
        _ = ccurl_setopt_pointer(h, CURLOPT_PREREQDATA, me)
        var list: UnsafeMutablePointer<curl_slist>?
        for (name, value) in r.headers + (r.revalidation?.conditionalHeaders ?? [])
        where !name.contains("\r") && !name.contains("\n") && !value.contains("\r") && !value.contains("\n") {
            list = curl_slist_append(list, "\(name): \(value)")
        }
        if r.method == .post {
            _ = ccurl_setopt_long(h, CURLOPT_POST, 1)
            let body = r.body ?? []
            _ = ccurl_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, Int64(body.count))
            body.withUnsafeBytes { _ = ccurl_setopt_pointer(h, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress)) }
            list = curl_slist_append(list, "Expect:")  // no 100-continue round trip
        }
        t.headerList = list
        if let list { _ = ccurl_setopt_pointer(h, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)) }
    }

    // MARK: driver thread

    private func run() {
        var running: Int32 = 0
        while !stopping.load(ordering: .relaxed) {
            for command in inbox.withLock({ box -> [Command] in
                defer { box.removeAll() }; return box
            }) {
                switch command {
                case .add(let t):
                    active[t.id] = t
                    curl_multi_add_handle(multi, t.handle)
                case .cancel(let id):
                    if let t = active[id] { finish(t, error: .cancelled) }
                }
            }
            curl_multi_perform(multi, &running)
            var remaining: Int32 = 0
            while let msg = curl_multi_info_read(multi, &remaining) {
                guard msg.pointee.msg == CURLMSG_DONE, let easy = msg.pointee.easy_handle else { continue }
                let code = msg.pointee.data.result
                var tag: UnsafeMutableRawPointer?
                ccurl_getinfo_pointer(easy, CURLINFO_PRIVATE, &tag)
                guard let tag, let t = active[UInt64(UInt(bitPattern: tag))] else { continue }
                if code == CURLE_OK || (t.exceededBodyLimit && t.request.cutsAtMaxBody) {
                    finish(t, error: nil)
                } else {
                    finish(t, error: Self.classify(code, t))
                }
            }
            var numfds: Int32 = 0
            curl_multi_poll(multi, nil, 0, 1000, &numfds)
        }
        for t in Array(active.values) { finish(t, error: .cancelled) }
        for command in inbox.withLock({ box -> [Command] in
            defer { box.removeAll() }; return box
        }) {
            if case .add(let t) = command, let c = t.continuation {
                t.continuation = nil
                c.resume(throwing: UpstreamError.cancelled)
            }
        }
        if let share { curl_share_cleanup(share) }
        curl_multi_cleanup(multi)
    }

    /// Ends the driver thread; transfers still running fail with `.cancelled`.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        curl_multi_wakeup(multi)
    }

    private func finish(_ t: CurlTransfer, error: UpstreamError?) {
        curl_multi_remove_handle(multi, t.handle)
        active[t.id] = nil
        guard let continuation = t.continuation else { return }
        t.continuation = nil
        if let error {
            continuation.resume(throwing: error)
            return
        }
        var status = 0
        ccurl_getinfo_long(t.handle, CURLINFO_RESPONSE_CODE, &status)
        var connects = 0
        ccurl_getinfo_long(t.handle, CURLINFO_NUM_CONNECTS, &connects)
        func time(_ info: CURLINFO) -> Double {
            var v = 0.0
            ccurl_getinfo_double(t.handle, info, &v)
            return v
        }
        var urlPointer: UnsafeMutableRawPointer?
        ccurl_getinfo_pointer(t.handle, CURLINFO_EFFECTIVE_URL, &urlPointer)
        let effective = urlPointer.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? t.request.url
        let timings = UpstreamResponse.Timings(
            dns: time(CURLINFO_NAMELOOKUP_TIME), connect: time(CURLINFO_CONNECT_TIME), tls: time(CURLINFO_APPCONNECT_TIME),
            firstByte: time(CURLINFO_STARTTRANSFER_TIME), total: time(CURLINFO_TOTAL_TIME))
        var response = UpstreamResponse(status: status, headers: t.headers, body: t.body, timings: timings, newConnections: connects, effectiveURL: effective)
        response.truncated = t.exceededBodyLimit
        // Every hop before the last was a redirect; only an all-permanent chain moves the resource.
        let hops = t.statuses.dropLast()
        if !hops.isEmpty, hops.allSatisfy({ $0 == 301 || $0 == 308 }), effective != t.request.url { response.permanentRedirect = effective }
        continuation.resume(returning: response)
    }

    static func classify(_ code: CURLcode, _ t: CurlTransfer) -> UpstreamError {
        if t.exceededBodyLimit { return .bodyTooLarge }
        if t.refusedAddress { return .forbiddenAddress }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .dnsFailure
        case CURLE_COULDNT_CONNECT: return .connectFailure
        case CURLE_OPERATION_TIMEDOUT: return .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            return .tlsFailure
        case CURLE_FILESIZE_EXCEEDED: return .bodyTooLarge
        case CURLE_TOO_MANY_REDIRECTS: return .tooManyRedirects
        case CURLE_UNSUPPORTED_PROTOCOL: return .protocolNotAllowed
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return .connectionLost
        default: return .other(String(cString: curl_easy_strerror(code)))
        }
    }
}
