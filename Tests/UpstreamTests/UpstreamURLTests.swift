import Testing
import TestSupport
@testable import Upstream

/// The URL is parsed once, when the request is made: the breaker's host, the span's
/// `server.address` and libcurl's scheme check all come from that one parse.
@Suite(.offPool) struct UpstreamURLTests {
    @Test(arguments: [
        ("https://itunes.apple.com/search?term=swift", "itunes.apple.com"),
        ("http://127.0.0.1:8080/ok", "127.0.0.1"),
        ("https://user:pw@feeds.example/rss", "feeds.example"),
        ("https://a@b@feeds.example:443/rss", "feeds.example"),
        ("https://user@[::1]:8443/x", "[::1]"),
        ("http://[2001:DB8::1]/", "[2001:db8::1]"),
        ("HTTPS://API.Example.COM/Path", "api.example.com"),
        ("http://a.example:80", "a.example"),
        ("http://a.example?q=1", "a.example"),
        ("http://a.example#top", "a.example"),
        ("http://a.example:8080?q=http://evil.example/", "a.example"),
        ("ftp://files.example/x", "files.example"),
        ("svn+ssh://code.example/x", "code.example"),
    ])
    func hostIsParsedFromTheAuthority(url: String, host: String) {
        #expect(UpstreamURL(url).host == host)
    }

    @Test(arguments: [
        "", "feeds.example/rss", "//feeds.example/rss", "feeds.example/redirect?to=http://evil.example/", "1http://a.example/",
        "http:a.example", "http:///path", "http://?q=1", "http://#x", "http://user@:80/", "http://[::1/", "mailto:a@b.example",
    ])
    func noHost(url: String) {
        #expect(UpstreamURL(url).host == nil)
    }

    @Test func schemeCheckIsHTTPOrHTTPSInAnyCase() {
        for url in ["http://a.example/", "https://a.example/", "HTTP://a.example/", "HtTpS://a.example/", "https://"] {
            #expect(UpstreamURL(url).isHTTP, "\(url)")
        }
        for url in ["", "ftp://a.example/", "file:///etc/passwd", "http:/a.example", "httpx://a", " http://a.example/", "https:a", "gopher://a", "http"] {
            #expect(!UpstreamURL(url).isHTTP, "\(url)")
        }
    }

    /// `url` stays a plain settable string; setting it parses the new one.
    @Test func settingTheURLParsesItAgain() {
        var request = UpstreamRequest(upstream: "t", url: "https://a.example/x")
        #expect(request.url == "https://a.example/x" && request.target.host == "a.example" && request.target.isHTTP)
        request.url = "ftp://B.example/y"
        #expect(request.url == "ftp://B.example/y" && request.target.host == "b.example" && !request.target.isHTTP)
        request.url += "?z"
        #expect(request.url == "ftp://B.example/y?z" && request.target.string == request.url)
    }

    @Test func spanAddressIsTheParsedHost() {
        let attributes = UpstreamSpan.attributes(UpstreamRequest(upstream: "t", url: "https://u:p@Feeds.Example:8443/rss?token=1"), attempt: 1)
        #expect(attributes.contains { $0.0 == "server.address" && $0.1 == .string("feeds.example") })
        let hostless = UpstreamSpan.attributes(UpstreamRequest(upstream: "t", url: "feeds.example/rss"), attempt: 1)
        #expect(!hostless.contains { $0.0 == "server.address" })
    }

    /// An API host's requests share one breaker whatever the host's case, port or path; a URL
    /// without a host is its own key; a publisher's feed URL is its own.
    @Test func breakerKeyIsTheParsedHost() throws {
        let client = try UpstreamClient(configuration: UpstreamConfiguration())
        let a = client.breaker(for: UpstreamRequest(upstream: "t", url: "https://api.example/a"))
        #expect(client.breaker(for: UpstreamRequest(upstream: "t", url: "https://API.Example:443/b?q=1")) === a)
        #expect(client.breaker(forHost: "api.example") === a)
        let hostless = client.breaker(for: UpstreamRequest(upstream: "t", url: "api.example/a"))
        #expect(hostless !== a && client.breaker(forHost: "api.example/a") === hostless)
        var feed = UpstreamRequest(upstream: "episodes", url: "https://api.example/feed.xml")
        feed.urlChosenByThirdParty = true
        #expect(client.breaker(for: feed) !== a)
    }

    /// libcurl is never handed a URL whose scheme is not http(s), whatever its case.
    @Test func nonHTTPSchemesAreRefusedBeforeTheTransfer() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try UpstreamClient(configuration: UpstreamConfiguration())
        await expectError(.protocolNotAllowed, within: 5) { try await client.send(UpstreamRequest(upstream: "t", url: "ftp://127.0.0.1:9/x")) }
        await expectError(.protocolNotAllowed, within: 5) { try await client.send(UpstreamRequest(upstream: "t", url: "FILE:///etc/passwd")) }
        let upper = "HTTP://" + up.url("/ok").dropFirst("http://".count)
        #expect(try await client.send(UpstreamRequest(upstream: "t", url: upper)).status == 200)
    }
}
