import FeedFormats
import Foundation
import TestSupport
import Testing

@testable import Feeds

/// Issue 57: a file read up to a cap keeps what arrived whole.
@Suite(.offPool) struct JSONCutTests {
    static let transcript = Array(
        #"{"version":"1.0.0","segments":[{"speaker":"Ada","startTime":0,"endTime":1.5,"body":"Hello, \"world\" {not a brace}"},{"startTime":1.5,"endTime":3,"body":"Second ] segment"},{"startTime":3,"endTime":4,"body":"Third"}]}"#
            .utf8)

    /// Cut at every byte: nothing, or a document that parses and holds a prefix of the segments.
    @Test func everyCutClosesIntoAPrefixOfTheDocument() throws {
        let whole = try #require(try? JSONParser.parse(Self.transcript))
        guard case .array(let all)? = whole["segments"] else { throw CocoaError(.coderReadCorrupt) }
        var seen = Set<Int>()
        for length in 0...Self.transcript.count {
            guard let closed = JSONCut.closed(Self.transcript.prefix(length)) else { continue }
            let parsed = try #require(try? JSONParser.parse(closed), "cut at \(length): \(String(decoding: closed, as: UTF8.self))")
            guard case .array(let kept)? = parsed["segments"] else {
                Issue.record("cut at \(length) lost the segments list")
                continue
            }
            #expect(kept.count <= all.count && zip(kept, all).allSatisfy { $0.0["body"]?.text == $0.1["body"]?.text })
            seen.insert(kept.count)
        }
        #expect(seen == [1, 2, 3], "\(seen)")  // nothing before the first segment is whole
        // The whole document closes into itself.
        #expect(JSONCut.closed(Self.transcript[...]) == nil || (try? JSONParser.parse(JSONCut.closed(Self.transcript[...]) ?? [])) != nil)
    }

    @Test func hostileInputIsNothingNotATrap() {
        #expect(JSONCut.closed(Array("]]]}}}".utf8)[...]) == nil)
        #expect(JSONCut.closed(Array(repeating: UInt8(ascii: "["), count: 100_000)[...]) == nil)
        #expect(JSONCut.closed(Array("\"\\\\\\\"{[".utf8)[...]) == nil)
        let deep = Array(repeating: UInt8(ascii: "["), count: 70) + Array(repeating: UInt8(ascii: "]"), count: 3)
        #expect(JSONCut.closed(deep[...]) == nil)  // deeper than it is worth closing
    }

    /// A WebVTT file cut in a cue: the cue it went through is left out.
    @Test func aCutCueFileLeavesOutTheCueItWentThrough() throws {
        let vtt = Array("WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nOne\n\n00:00:01.000 --> 00:00:02.000\nTwo is cut he".utf8)
        let part = EpisodePart(.transcript(.webVTT, language: nil), url: "https://x.example/t.vtt", duration: nil)
        let json = try JSONSerialization.jsonObject(with: Data(try part.read(vtt, cut: true))) as? [String: Any] ?? [:]
        let texts = (json["segments"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        #expect(texts == ["One"] && json["truncated"] as? Bool == true)
        let jsonPart = EpisodePart(.transcript(.json, language: nil), url: "https://x.example/t.json", duration: nil)
        let cutJSON = Array(Self.transcript.prefix(Self.transcript.count - 30))
        let read = try JSONSerialization.jsonObject(with: Data(try jsonPart.read(cutJSON, cut: true))) as? [String: Any] ?? [:]
        #expect((read["segments"] as? [Any])?.count == 2 && read["truncated"] as? Bool == true)
    }
}
