import Primitives

/// `GET /podcasts/{id}/episodes/{episodeId}?include=chapters,transcript`, validated.
public struct EpisodeQuery: Sendable, Equatable {
    public let podcastID: Int
    /// The episode's `id` as the episodes route gives it (the feed's guid, else its audio URL).
    public let episodeID: String
    public let chapters: Bool
    public let transcript: Bool

    public static let maxEpisodeIDBytes = 2048

    public init(_ p: QueryParameters) throws(ClientError) {
        podcastID = try PodcastAdapter.collectionID(p)
        guard let id = p.value("episodeId"), !id.isEmpty, id.utf8.count <= Self.maxEpisodeIDBytes else {
            throw .invalidParameter(
                "episodeId must be an episode's id as /podcasts/{id}/episodes gives it (URL-encoded), at most \(Self.maxEpisodeIDBytes) bytes")
        }
        episodeID = id
        var chapters = false, transcript = false
        if let include = p.value("include") {
            for part in include.split(separator: ",", omittingEmptySubsequences: false) {
                switch part {
                case "chapters": chapters = true
                case "transcript": transcript = true
                default: throw .invalidParameter("include takes chapters, transcript or both, comma-separated")
                }
            }
        }
        self.chapters = chapters
        self.transcript = transcript
    }

    /// The key the whole answer is kept under: equivalent spellings of the query share it.
    public var answerKey: String { "episode|id=\(podcastID)|include=\(chapters ? "c" : "")\(transcript ? "t" : "")|\(episodeID)" }
}
