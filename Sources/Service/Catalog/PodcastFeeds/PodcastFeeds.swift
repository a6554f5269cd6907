import Feeds

/// The podcast feeds' adapter and its cached loads, built once (`Services`) for every route
/// that reads a podcast's feed: its episodes, an episode's chapters and transcript files.
struct PodcastFeeds: Sendable {
    let adapter: EpisodesAdapter
    let episodes: FeedRoute
    let chapters: FeedRoute
    let transcripts: FeedRoute
    /// What library refreshes (GET and form POST alike) give up of their deadline to compose.
    let batchAnswers: AnswerAllowance
}
