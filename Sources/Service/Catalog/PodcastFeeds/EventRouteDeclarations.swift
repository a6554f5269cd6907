import Feeds
import HTTPServer
import Push

extension PodcastFeeds {
    /// A library's event stream (and as a form, and by a handle), publishers' pings, WebSub.
    static let eventRoutes: [RouteDeclaration] = [
        RouteDeclaration(.episodeEvents, operation: "streamLibraryEpisodes", tag: .podcasts, described: EventsAPI.events) { s in stream(s) },
        RouteDeclaration(
            .episodeEvents, method: "POST", operation: "postStreamLibraryEpisodes", tag: .podcasts,
            described: LibraryAPI.formOf(
                EventsAPI.events, path: "/episodes/events",
                note: " For a library whose ids and token pass no URL: a fetch-based event-stream client POSTs them (EventSource cannot).")
        ) { s in stream(s) },
        RouteDeclaration(.episodeEventsLibrary, method: "POST", operation: "makeLibraryHandle", tag: .podcasts, described: EventsAPI.libraryHandle) {
            s in LibraryHandleRoute(hub: s.episodeEvents).handle
        },
        RouteDeclaration(.hubNotify, operation: "notifyFeedChanged", tag: .podcasts, described: EventsAPI.notify) { s in
            HubNotifyRoute(hub: s.episodeEvents).handle
        },
        RouteDeclaration(.hubNotify, method: "POST", operation: "postNotifyFeedChanged", tag: .podcasts, described: EventsAPI.notifyForm) { s in
            HubNotifyRoute(hub: s.episodeEvents).handle
        },
        RouteDeclaration(.hubWebSub, operation: "verifyWebSubSubscription", tag: .podcasts, described: EventsAPI.websubVerify, when: { $0.websubEnabled }) {
            s in WebSubCallbackRoute.handler(s)
        },
        RouteDeclaration(
            .hubWebSub, method: "POST", operation: "receiveWebSubNotification", tag: .podcasts, described: EventsAPI.websubNotify,
            when: { $0.websubEnabled }
        ) { s in WebSubCallbackRoute.handler(s) },
    ]

    private static func stream(_ s: Services) -> Handler<MeteredRequestContext> {
        EpisodeEventsRoute(
            adapter: s.podcastFeeds.adapter, feeds: s.podcastFeeds.episodes, hub: s.episodeEvents, deadline: s.configuration[Setting.episodesBatchDeadline]
        ).handle
    }
}
