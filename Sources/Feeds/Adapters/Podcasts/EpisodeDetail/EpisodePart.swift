import FeedFormats
import Primitives
import Upstream

/// A file an episode points to (its chapters, a transcript), fetched like every
/// third-party URL — public addresses only, size-capped, conditional on refresh, single-flight
/// — and kept read: the cached body is the part's JSON as the episode answer carries it.
/// The episode's length is in the key: the times are checked against it.
public struct EpisodePart: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case chapters
        case transcript(TranscriptFormat, language: String?)
    }

    public let kind: Kind
    public let url: String
    /// The episode's length in seconds, when the feed gives it.
    public let duration: Int?

    public init(_ kind: Kind, url: String, duration: Int?) {
        self.kind = kind
        self.url = url
        self.duration = duration
    }

    /// `chapters` or `transcript`: the answer's field, and the `problems` entries' `part`.
    public var name: String {
        if case .chapters = kind { return "chapters" }
        return "transcript"
    }

    public var cacheKey: String {
        switch kind {
        case .chapters: return "chapters|d=\(duration ?? -1)|\(url)"
        case .transcript(let format, let language): return "transcript|\(format.rawValue)|\(language ?? "")|d=\(duration ?? -1)|\(url)"
        }
    }

    /// The file is not what it says it is: a typed absence in the episode answer, remembered
    /// for the negative TTL like a missing file.
    static func unreadable(_ part: String, _ message: String) -> ClientError {
        ClientError(status: 422, code: "\(part)_unreadable", message: message)
    }

    /// Reads the file: the part's JSON (`[chapter…]` or a transcript object). `cut`: the body
    /// is the file's start only (it was larger than the cap): what arrived whole is read, the
    /// rest left out, and a transcript says `truncated`.
    public func read(_ body: [UInt8], cut: Bool = false) throws(ClientError) -> [UInt8] {
        let seconds = duration.map(Double.init)
        switch kind {
        case .chapters:
            let whole = cut ? JSONCut.closed(body[...]) ?? body : body
            let marks = try JSONChapters.read(whole, url: url, duration: seconds)
            return try FeedJSON.encode(marks)
        case .transcript(let format, let language):
            var text = TranscriptText(duration: seconds)
            try format.read(cut ? format.wholePart(of: body) : body, into: &text)
            if cut { text.markTruncated() }
            let transcript = EpisodeTranscript(url: url, type: format.rawValue, language: language, truncated: text.truncated, segments: text.sortedSegments)
            return try FeedJSON.encode(transcript)
        }
    }
}

/// Loads episode parts through the upstream client.
public struct EpisodePartLoader: Sendable {
    /// The most read of a file: a larger one is read up to here and served cut (a transcript
    /// says `truncated`), not refused.
    public let maxFileBytes: Int
    let allowPrivateHosts: Bool

    public init(maxFileBytes: Int, allowPrivateHosts: Bool) {
        self.maxFileBytes = maxFileBytes
        self.allowPrivateHosts = allowPrivateHosts
    }

    public func prepared(_ part: EpisodePart) -> PreparedFeed {
        let accept: String
        switch part.kind {
        case .chapters: accept = "application/json+chapters, application/json;q=0.9, */*;q=0.5"
        case .transcript(let format, _): accept = "\(format.rawValue), */*;q=0.5"
        }
        var request = UpstreamRequest(
            upstream: SourceName.episodes, url: part.url, headers: [("Accept", accept)], maxBodyBytes: maxFileBytes, publicAddressesOnly: !allowPrivateHosts)
        request.urlChosenByThirdParty = true
        request.cutsAtMaxBody = true
        return PreparedFeed(source: SourceName.episodes, cacheKey: part.cacheKey, upstreamRequest: request) {
            (response: UpstreamResponse) throws(ClientError) in
            Representation(try part.read(response.body, cut: response.truncated))
        }
    }
}
