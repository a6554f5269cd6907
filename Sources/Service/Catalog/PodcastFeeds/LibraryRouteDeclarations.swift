import Feeds

extension PodcastFeeds {
    /// A podcast app's library by feed URL: a podcast by its feed's URL, OPML in and out.
    static let libraryRoutes: [RouteDeclaration] = [
        RouteDeclaration(.podcastByFeedURL, operation: "getPodcastByFeedURL", tag: .podcasts, described: LibraryAPI.byFeedURL) { s in
            FeedByURLRoute(adapter: s.podcastFeeds.adapter, feeds: s.podcastFeeds.episodes, registry: s.feedRegistry).handle
        },
        RouteDeclaration(.library, method: "POST", operation: "importLibrary", tag: .library, described: LibraryAPI.importLibrary) { s in
            LibraryImportRoute(
                adapter: s.podcastFeeds.adapter, feeds: s.podcastFeeds.episodes, registry: s.feedRegistry,
                deadline: s.configuration[Setting.episodesBatchDeadline]
            ).handle
        },
        RouteDeclaration(.library, operation: "exportLibrary", tag: .library, described: LibraryAPI.exportLibrary) { s in
            LibraryExportRoute(s).handle
        },
        RouteDeclaration(
            .libraryExport, method: "POST", operation: "postExportLibrary", tag: .library,
            described: LibraryAPI.formOf(LibraryAPI.exportLibrary, path: "/library/opml")
        ) { s in LibraryExportRoute(s).handle },
    ]
}
