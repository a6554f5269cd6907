import Primitives

/// One request to an upstream. `upstream` names it for limits, breakers, metrics and errors.
public struct UpstreamRequest: Sendable {
    public enum Method: String, Sendable { case get = "GET", post = "POST" }

    public var upstream: String
    public var method: Method
    /// The URL, parsed again whenever it is set.
    public var url: String {
        get { target.string }
        set { target = UpstreamURL(newValue) }
    }
    /// `url` parsed: its scheme check and host, for the send path.
    private(set) var target: UpstreamURL
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// Total time budget (all attempts); nil uses the client's default.
    public var timeoutSeconds: Double?
    /// Body cap; nil uses the client's default.
    public var maxBodyBytes: Int?
    /// A body past the cap is cut there (the response says `truncated`) instead of failing:
    /// for files read from the start, whose first part is worth having (a long transcript).
    public var cutsAtMaxBody = false
    /// Refuse connections to loopback/private/link-local/multicast addresses
    /// (checked on the address curl actually connects to, redirects included).
    public var publicAddressesOnly: Bool
    /// The URL was chosen by a third party (a podcast publisher), not configured: its
    /// failures open a circuit breaker of its own instead of its whole host's.
    public var urlChosenByThirdParty = false
    /// Exact addresses accepted even when `publicAddressesOnly` is set (an operator's known internal host).
    public var allowedAddresses: Set<String> = []
    /// An earlier answer's validators: sent as `If-None-Match` / `If-Modified-Since`, and a
    /// `304 Not Modified` is then an answer (the caller renews what it has), not an error.
    public var revalidation: Revalidation?

    public init(
        upstream: String, method: Method = .get, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        timeoutSeconds: Double? = nil, maxBodyBytes: Int? = nil, publicAddressesOnly: Bool = false
    ) {
        self.upstream = upstream
        self.method = method
        self.target = UpstreamURL(url)
        self.headers = headers
        self.body = body
        self.timeoutSeconds = timeoutSeconds
        self.maxBodyBytes = maxBodyBytes
        self.publicAddressesOnly = publicAddressesOnly
    }

    /// GET is retried once on connect failures and 502/503/504; POST is not.
    public var isIdempotent: Bool { method == .get }
}

/// What came back: status, headers, body and where the time went.
public struct UpstreamResponse: Sendable {
    public let status: Int
    public let headers: [(String, String)]
    public let body: [UInt8]
    public let timings: Timings
    /// Connections curl had to open for this transfer (0: an existing one was reused).
    public let newConnections: Int
    public let effectiveURL: String
    /// Where the resource now lives when every redirect on the way was permanent (301/308);
    /// nil without redirects, or when any was temporary.
    public var permanentRedirect: String? = nil
    /// The body stops at the request's cap (`cutsAtMaxBody`): the rest was not read.
    public var truncated = false

    /// `304 Not Modified` to a conditional request: what the caller has is still current.
    public var isNotModified: Bool { status == 304 }

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.last { $0.0.lowercased() == lower }?.1
    }

    public struct Timings: Sendable {
        public let dns: Double
        public let connect: Double
        public let tls: Double
        public let firstByte: Double
        public let total: Double
    }
}
