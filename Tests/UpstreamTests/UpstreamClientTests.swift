import Foundation
import Testing
import Primitives
import TestSupport
@testable import Upstream

@Suite(.serialized, .offPool) struct UpstreamClientTests {
    static func client(_ configure: (inout UpstreamConfiguration) -> Void = { _ in }) throws -> UpstreamClient {
        var c = UpstreamConfiguration()
        c.timeoutMs = 2000
        c.connectTimeoutMs = 1000
        c.userAgent = "FeedProxy/test"
        configure(&c)
        return try UpstreamClient(configuration: c)
    }

    @Test func getReturnsBodyHeadersAndSendsUserAgent() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client()
        let r = try await client.send(UpstreamRequest(upstream: "t", url: up.url("/headers"), headers: [("X-Custom", "yes")]))
        #expect(r.status == 200)
        let echoed = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: String] ?? [:]
        #expect(echoed["ua"] == "FeedProxy/test")
        #expect(echoed["custom"] == "yes")
        #expect(r.header("content-type") == "application/json; charset=utf-8")
    }

    /// W3C Trace Context (issue 24): each attempt carries the request's trace id and flags
    /// with a new parent id, and its tracestate; without a trace, a new one per attempt.
    @Test func upstreamRequestsContinueTheTrace() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client()
        let trace = TraceContext(traceHigh: 0x4bf9_2f35_77b3_4da6, traceLow: 0xa3ce_929d_0e0e_4736, spanID: 7, parentID: 9, flags: 1, state: "rojo=1")
        var parents: Set<String> = []
        for _ in 0..<3 {
            let r = try await UpstreamRequestContext.$current.withValue(.init(trace: trace)) {
                try await client.send(UpstreamRequest(upstream: "t", url: up.url("/headers")))
            }
            let echoed = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: String] ?? [:]
            let parts = (echoed["traceparent"] ?? "").split(separator: "-")
            #expect(parts.count == 4)
            #expect(parts.first == "00" && parts.dropFirst().first == "4bf92f3577b34da6a3ce929d0e0e4736" && parts.last == "01")
            parents.insert(String(parts.dropFirst(2).first ?? ""))
            #expect(echoed["tracestate"] == "rojo=1")
        }
        #expect(parents.count == 3 && !parents.contains("0000000000000000"))
        let untraced = try await client.send(UpstreamRequest(upstream: "t", url: up.url("/headers")))
        let echoed = try JSONSerialization.jsonObject(with: Data(untraced.body)) as? [String: String] ?? [:]
        #expect(echoed["traceparent"]?.count == 55)
        #expect(echoed["traceparent"]?.contains("4bf92f3577b34da6a3ce929d0e0e4736") == false)
    }

    @Test func postSendsJSONBody() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client()
        let body = Array("{\"query\":\"{ lend { loans { totalCount } } }\"}".utf8)
        let r = try await client.send(
            UpstreamRequest(upstream: "t", method: .post, url: up.url("/echo"), headers: [("Content-Type", "application/json")], body: body))
        #expect(r.body == body)
    }

    @Test func secondFetchReusesTheConnection() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client()
        let first = try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok")))
        let second = try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok")))
        #expect(first.newConnections == 1)
        #expect(second.newConnections == 0)
        #expect(up.server.openConnections == 1)
    }

    @Test func slowResponseTimesOut() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client { $0.timeoutMs = 300 }
        await expectError(.timeout, within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/slow?ms=30000"))) }
    }

    /// Issue 66: a feed that waited for a busy host with too little of its deadline left to be
    /// answered is not asked for: the publisher does not serve an answer the replica abandons,
    /// and the next ask does not download it a second time (the storm at 450 apps did so). One
    /// with its budget left is sent.
    @Test func aRequestLeftWithTooLittleTimeAfterWaitingForTheHostIsNotSent() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client {
            $0.timeoutMs = 4000
            $0.maxHostConnections = 1
        }
        let holder = Task { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/slow?ms=1500"))) }
        #expect(waitUntil(10) { up.requestCount == 1 }, "the first request holds the host's one connection")
        func send(within seconds: Double) async -> Result<UpstreamResponse, UpstreamError> {
            await UpstreamRequestContext.with({ $0.deadline = NativeThread.monotonicSeconds() + seconds }) {
                do throws(UpstreamError) {
                    return .success(try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok"))))
                } catch {
                    return .failure(error)
                }
            }
        }
        async let late = send(within: 2.0)
        async let patient = send(within: 10)
        let (lateResult, patientResult) = await (late, patient)
        if case .failure(let error) = lateResult { #expect(error == .hostBusy(retryAfter: 1)) } else { Issue.record("sent with \(lateResult)") }
        if case .success(let answer) = patientResult { #expect(answer.status == 200) } else { Issue.record("\(patientResult)") }
        _ = try await holder.value
        #expect(up.requestCount == 2, "the host was asked for the first and the patient one, not the late one")
    }

    @Test func perRequestTimeoutOverridesDefault() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client { $0.timeoutMs = 60_000 }
        await expectError(.timeout, within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/hang"), timeoutSeconds: 0.3)) }
    }

    @Test func acceptAndHangCostsAtMostTheTimeout() async throws {
        let raw = try RawFaultServer(mode: .acceptAndSilence)
        defer { raw.stop() }
        let client = try Self.client { $0.timeoutMs = 400 }
        await expectError(.timeout, within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: raw.url)) }
    }

    @Test func errorStatusWithHTMLBodyIsTyped() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client()
        await expectError(.httpStatus(500), within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/status/500"))) }
        await expectError(.httpStatus(404), within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/status/404"))) }
    }

    @Test func idempotent503IsRetriedOnce() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client()
        await expectError(.httpStatus(503), within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/status/503"))) }
        #expect(up.requestCount == 2)
        // 404 is not retried; POST is never retried.
        await expectError(.httpStatus(404), within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/status/404"))) }
        #expect(up.requestCount == 3)
    }

    @Test func truncatedBodyAndResetAreConnectionLost() async throws {
        let truncated = try RawFaultServer(mode: .truncatedBody)
        defer { truncated.stop() }
        let reset = try RawFaultServer(mode: .resetAfterRequest)
        defer { reset.stop() }
        let client = try Self.client()
        await expectError(.connectionLost, within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: truncated.url)) }
        await expectError(.connectionLost, within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: reset.url)) }
    }

    @Test func oversizedBodyIsAborted() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client { $0.maxBodyBytes = 10_000 }
        await expectError(.bodyTooLarge, within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/big?bytes=50000"))) }
        let ok = try await client.send(UpstreamRequest(upstream: "t", url: up.url("/big?bytes=9000")))
        #expect(ok.body.count == 9000)
    }

    @Test func redirectsAreCappedAndSchemesRestricted() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client()
        await expectError(.tooManyRedirects, within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/redirect-loop"))) }
        await expectError(.protocolNotAllowed, within: 15) {
            try await client.send(UpstreamRequest(upstream: "t", url: up.url("/redirect?to=file:///etc/passwd")))
        }
        await expectError(.protocolNotAllowed, within: 15) {
            try await client.send(UpstreamRequest(upstream: "t", url: up.url("/redirect?to=gopher://127.0.0.1/x")))
        }
        await expectError(.protocolNotAllowed, within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: "file:///etc/passwd")) }
        let followed = try await client.send(UpstreamRequest(upstream: "t", url: up.url("/redirect?to=/ok")))
        #expect(followed.status == 200)
    }

    @Test func connectAndDNSFailures() async throws {
        let client = try Self.client()
        // A port nothing listens on (bound then closed).
        let raw = try RawFaultServer(mode: .acceptAndSilence)
        let deadURL = raw.url
        raw.stop()
        await expectError(.connectFailure, within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: deadURL)) }
        await expectError(.dnsFailure, within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: "http://no-such-host.invalid/")) }
    }

    @Test func privateAddressesRefusedWhenPublicOnly() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client()
        await expectError(.forbiddenAddress, within: 15) {
            try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok"), publicAddressesOnly: true))
        }
        #expect(up.requestCount == 0)
    }

    @Test func circuitOpensAfterConsecutiveFailuresThenProbes() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let clock = TestClock()
        let client = try UpstreamClient(
            configuration: {
                var c = UpstreamConfiguration()
                c.breakerThreshold = 3
                c.breakerCooldownSeconds = 10
                return c
            }(), clock: { clock.now })
        for _ in 0..<3 { _ = try? await client.send(UpstreamRequest(upstream: "t", url: up.url("/status/500"))) }
        #expect(up.requestCount == 3)
        await expectError(.circuitOpen(retryAfter: 10), within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok"))) }
        #expect(up.requestCount == 3)
        clock.advance(11)
        let probe = try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok")))
        #expect(probe.status == 200)
        #expect(client.breakerStates().first?.state == .closed)
    }

    @Test func rateLimitGivesDistinctError() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let clock = TestClock()
        let client = try Self.client { $0.ratePerMinute = ["itunes": 12] }  // burst of 2, one per 5 s
        _ = try await client.send(UpstreamRequest(upstream: "itunes", url: up.url("/ok")))
        _ = try await client.send(UpstreamRequest(upstream: "itunes", url: up.url("/ok")))
        do {
            _ = try await client.send(UpstreamRequest(upstream: "itunes", url: up.url("/ok")))
            Issue.record("expected rate limit")
        } catch {
            guard case .rateLimited(let after) = error else { Issue.record("got \(error)"); return }
            #expect(after > 0 && after <= 5)
        }
        #expect(up.requestCount == 2)
        // Other upstreams are not limited.
        _ = try await client.send(UpstreamRequest(upstream: "flickr", url: up.url("/ok")))
        _ = clock
    }

    @Test func twoHundredConcurrentFetchesAndNoHandleLeak() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client()
        let statuses = await withTaskGroup(of: Int.self) { group in
            for i in 0..<200 {
                group.addTask {
                    (try? await client.send(UpstreamRequest(upstream: "t", url: up.url(i % 2 == 0 ? "/ok" : "/slow?ms=50"))).status) ?? -1
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 200)
        #expect(statuses.allSatisfy { $0 == 200 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(UpstreamClient.liveHandles == 0)
    }

    @Test func cancellationStopsTheTransfer() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client { $0.timeoutMs = 10_000 }
        let task = Task { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/hang"))) }
        try await Task.sleep(for: .milliseconds(200))
        let start = Date()
        task.cancel()
        let result = await task.result
        #expect(Date().timeIntervalSince(start) < 8, "stopped when cancelled, not at its 10 s timeout")
        if case .failure(let e) = result { #expect(e as? UpstreamError == .cancelled) } else { Issue.record("expected cancellation") }
    }
}

final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Double = 1000
    var now: Double { lock.withLock { value } }
    func advance(_ s: Double) { lock.withLock { value += s } }
}

@Suite(.offPool) struct RedirectAddressCheckTests {
    @Test func redirectToAnotherPrivateAddressIsRefused() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try UpstreamClientTests.client()
        var request = UpstreamRequest(upstream: "t", url: up.url("/redirect?to=http://127.0.0.2:\(up.server.port)/ok"), publicAddressesOnly: true)
        request.allowedAddresses = ["127.0.0.1"]  // the first hop is allowed, the redirect target is not
        do {
            _ = try await client.send(request)
            Issue.record("expected the redirect to be refused")
        } catch {
            #expect(error == .forbiddenAddress)
        }
        #expect(up.requestCount == 1)
        var direct = request
        direct.url = up.url("/ok")
        #expect(try await client.send(direct).status == 200)
    }

    @Test func reusedConnectionIsCheckedToo() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try UpstreamClientTests.client()
        // An unrestricted request leaves a pooled connection to 127.0.0.1 behind...
        _ = try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok")))
        // ...which a restricted request must not be allowed to reuse.
        do {
            _ = try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok"), publicAddressesOnly: true))
            Issue.record("expected the reused connection to be refused")
        } catch {
            #expect(error == .forbiddenAddress)
        }
        #expect(up.requestCount == 1)
    }
}

/// The request fails with `expected`, and does so within `seconds`: a bound against hanging
/// (and against waiting out a far longer alternative), never a measure of speed.
func expectError(_ expected: UpstreamError, within seconds: Double, _ body: () async throws -> UpstreamResponse) async {
    let start = Date()
    do {
        _ = try await body()
        Issue.record("expected \(expected), got a response")
    } catch {
        #expect(error as? UpstreamError == expected)
    }
    #expect(Date().timeIntervalSince(start) < seconds)
}
