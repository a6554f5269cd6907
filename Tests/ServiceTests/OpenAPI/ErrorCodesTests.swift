import Feeds
import Foundation
import TestSupport
import Testing
import Upstream

@testable import Service

/// Issue 69: the errors table (docs/API.md, the OpenAPI document's error schema) comes from
/// ErrorCodes, and ErrorCodes is what the code throws: every code in the sources is listed
/// with the status it is thrown with, and every listed code is thrown somewhere.
@Suite(.offPool) struct ErrorCodesTests {
    /// `status: N, code: "x"` and `code: "x"` in the service's sources (the fixture upstream's own errors are not ours).
    static func codesInSources() throws -> (codes: Set<String>, statuses: [String: Set<Int>]) {
        let sources = UpstreamCatalogTests.repositoryRoot.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        let withStatus = try NSRegularExpression(pattern: #"status: ([0-9]{3}), code: "([a-z_]+)""#)
        // An argument label (`(…, code: "x"`, `ClientError(code:`), not an enum case's value (`case .code: "code"`).
        let bare = try NSRegularExpression(pattern: #"[(,] *code: "([a-z_]+)""#)
        var codes = Set<String>()
        var statuses: [String: Set<Int>] = [:]
        for file in files where file.pathExtension == "swift" && !file.path.contains("/FixtureUpstream/") {
            let text = try String(contentsOf: file, encoding: .utf8)
            let range = NSRange(text.startIndex..., in: text)
            for m in withStatus.matches(in: text, range: range) {
                guard let s = Range(m.range(at: 1), in: text), let c = Range(m.range(at: 2), in: text), let status = Int(text[s]) else { continue }
                statuses[String(text[c]), default: []].insert(status)
            }
            for m in bare.matches(in: text, range: range) {
                if let c = Range(m.range(at: 1), in: text) { codes.insert(String(text[c])) }
            }
        }
        // Codes made by name rather than spelled out (`"\(part)_unreadable"`, an UpstreamError's case).
        return (codes.union(UpstreamError.codes).union(ClientError.feedCodes), statuses)
    }

    @Test func everyCodeThrownIsListedWithItsStatusAndEveryListedCodeIsThrown() throws {
        let (thrown, statuses) = try Self.codesInSources()
        let listed = Dictionary(ErrorCodes.all.map { ($0.code, $0.status) }, uniquingKeysWith: { a, _ in a })
        #expect(listed.count == ErrorCodes.all.count, "a code listed twice")
        for code in thrown.subtracting(listed.keys).sorted() { Issue.record("\(code) is thrown but not in ErrorCodes (nor docs/API.md's errors table)") }
        for code in Set(listed.keys).subtracting(thrown).sorted() { Issue.record("\(code) is in ErrorCodes but thrown nowhere") }
        for (code, seen) in statuses {
            guard let status = listed[code] else { continue }
            #expect(seen == [status], "\(code) is thrown with \(seen.sorted()), listed as \(status)")
        }
    }
}
