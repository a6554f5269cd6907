import Feeds
import HTTPServer

extension PodcastFeeds {
    /// A podcast's episodes, one episode complete, a library's episodes (and as a form).
    static let episodeRoutes: [RouteDeclaration] = [
        RouteDeclaration(.episodes, operation: "listPodcastEpisodes", tag: .podcasts, described: PodcastFeedsAPI.episodes) { s in
            s.podcastFeeds.episodes.handle
        },
        RouteDeclaration(.episode, operation: "getPodcastEpisode", tag: .podcasts, described: PodcastFeedsAPI.episode) { s in
            let c = s.configuration, feeds = s.podcastFeeds
            return EpisodeRoute(
                adapter: feeds.adapter, feeds: feeds.episodes,
                parts: EpisodePartLoader(maxFileBytes: c[Setting.episodeFileMaxBytes], allowPrivateHosts: c.allowPrivateFeedHosts),
                chapterLoads: feeds.chapters, transcriptLoads: feeds.transcripts
            ).handle
        },
        RouteDeclaration(.episodeBatch, operation: "listLibraryEpisodes", tag: .podcasts, described: PodcastFeedsAPI.library) { s in
            libraryBatch(s)
        },
        RouteDeclaration(
            .episodeBatch, method: "POST", operation: "postLibraryEpisodes", tag: .podcasts,
            described: LibraryAPI.formOf(PodcastFeedsAPI.library, path: "/episodes", note: " Follow page.next by sending its cursor in the form.")
        ) { s in libraryBatch(s) },
    ]

    private static func libraryBatch(_ s: Services) -> Handler<MeteredRequestContext> {
        EpisodeBatchRoute(
            adapter: s.podcastFeeds.adapter, feeds: s.podcastFeeds.episodes, deadline: s.configuration[Setting.episodesBatchDeadline],
            allowance: s.podcastFeeds.batchAnswers, warm: s.episodeEvents
        ).handle
    }
}
