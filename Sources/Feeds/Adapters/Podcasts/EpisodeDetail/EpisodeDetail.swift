import FeedFormats
import Primitives

/// One episode of a podcast's episode data, and the files it points to.
public struct EpisodeDetail: Sendable {
    /// The episode's JSON, as in the episodes list.
    public let json: ArraySlice<UInt8>
    /// Its inline (Podlove) chapters' JSON; empty when it has none.
    public let inlineChapters: ArraySlice<UInt8>
    /// Its `podcast:chapters` JSON file.
    public let chaptersFile: EpisodePart?
    /// Its transcripts FeedProxy reads, best first (timed formats before untimed ones).
    public let transcripts: [EpisodePart]

    /// At most this many transcripts are tried when the better ones fail.
    public static let maxTranscriptsTried = 3

    /// The episode whose id is `id`, or nil when the data holds none.
    public init?(in data: EpisodeFeedData, id: String) {
        struct Fields: Decodable {
            struct Link: Decodable {
                let url: String
                let type: String?
                let language: String?
            }
            let id: String?
            let duration: Int?
            let chapters: Link?
            let transcripts: [Link]?
        }
        let anchor = EpisodeCursor.anchor(id: id, json: [][...])
        for (i, entry) in data.entries.enumerated() where entry.anchor == anchor {
            guard let episode = data.episode(i), let fields = try? FeedJSON.decode(Fields.self, from: episode.json, source: SourceName.episodes),
                fields.id == id
            else { continue }
            json = episode.json
            inlineChapters = episode.chapters
            // A chapters link with a type other than JSON (a Podlove XML file, say) is not read.
            chaptersFile = fields.chapters.flatMap { link in
                (link.type ?? "application/json+chapters").lowercased().contains("json")
                    ? EpisodePart(.chapters, url: link.url, duration: fields.duration) : nil
            }
            let readable = (fields.transcripts ?? []).compactMap { link in
                TranscriptFormat(type: link.type, url: link.url).map { (format: $0, link: link) }
            }
            transcripts = readable.enumerated().sorted { ($0.element.format, $0.offset) < ($1.element.format, $1.offset) }.prefix(Self.maxTranscriptsTried).map
            {
                EpisodePart(.transcript($0.element.format, language: $0.element.link.language), url: $0.element.link.url, duration: fields.duration)
            }
            return
        }
        return nil
    }
}

/// The one-episode answer: `{"source", "podcastId", "item", "chapters", "transcript", "problems"}`,
/// put together from bytes already encoded (the episode's, each part's).
public enum EpisodeAnswer {
    /// Why a part an app asked for is absent.
    public struct Problem: Error, Sendable, Equatable {
        public let part: String
        public let code: String
        public let message: String

        public init(part: String, code: String, message: String) {
            self.part = part
            self.code = code
            self.message = message
        }
    }

    public static func render(podcastID: Int, item: ArraySlice<UInt8>, chapters: [UInt8]?, transcript: [UInt8]?, problems: [Problem]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(item.count + (chapters?.count ?? 0) + (transcript?.count ?? 0) + 160)
        out += #"{"source":"rss","podcastId":"#.utf8
        out += String(podcastID).utf8
        out += #","item":"#.utf8
        out += item
        out += #","chapters":"#.utf8
        out += chapters ?? Array("null".utf8)
        out += #","transcript":"#.utf8
        out += transcript ?? Array("null".utf8)
        out += #","problems":["#.utf8
        for (i, problem) in problems.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"part":"#.utf8
            JSONBytes.appendQuoted(problem.part, to: &out)
            out += #","code":"#.utf8
            JSONBytes.appendQuoted(problem.code, to: &out)
            out += #","message":"#.utf8
            JSONBytes.appendQuoted(problem.message, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out += "]}".utf8
        return out
    }
}
