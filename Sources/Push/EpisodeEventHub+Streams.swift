import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// Admission: a stream's place (per replica, per client), its start and its end.
extension EpisodeEventHub {
    /// A stream's place, taken when its request is admitted (before its head is sent), so
    /// admission counts streams still starting; given back if the stream never starts.
    package final class Place: Sendable {
        let client: ClientKey?
        fileprivate let hub: EpisodeEventHub
        fileprivate let taken = Atomic<Bool>(false)

        fileprivate init(client: ClientKey?, hub: EpisodeEventHub) {
            self.client = client
            self.hub = hub
        }

        deinit { if !taken.load(ordering: .acquiring) { hub.giveBack(client) } }
    }

    /// A place for `client`'s stream; nil when this replica, or this address under pressure,
    /// holds all the streams it may.
    package func reserve(client: ClientKey?) -> Place? {
        let admitted = state.withLock { st -> Bool in
            guard admits(client, in: st) else { return false }
            st.starting += 1
            st.perClient[client, default: 0] += 1
            return true
        }
        return admitted ? Place(client: client, hub: self) : nil
    }

    private func giveBack(_ client: ClientKey?) {
        state.withLock { st in
            st.starting -= 1
            st.perClient[client, default: 1] -= 1
            if st.perClient[client] == 0 { st.perClient[client] = nil }
        }
    }

    /// An address is not a person (a carrier NAT puts thousands behind one): while the replica
    /// holds less than half of its streams, every stream is taken; past that, an address
    /// holding `streamsPerClient` gets no more, so one address's flood cannot take the rest.
    private func admits(_ client: ClientKey?, in st: State) -> Bool {
        let held = st.subscribers.count + st.starting
        guard held < limits.streams else { return false }
        return held < limits.streams / 2 || st.perClient[client, default: 0] < limits.streamsPerClient
    }

    /// Adds a stream in the place its request was given.
    package func add(_ s: Subscriber, in place: Place) {
        let urls = s.ids.map { id -> (Int, String?) in (id, feedURL(of: id)) }
        place.taken.store(true, ordering: .releasing)
        state.withLock { st in
            st.starting -= 1
            let key = st.subscribers.insert(s)
            for id in s.ids { st.watchers[id, default: []].insert(key) }
            st.lookedAt = nil
            for case (let id, let url?) in urls where st.urlOf[id] == nil {
                st.urlOf[id] = url
                st.byURL[url, default: []].insert(id)
            }
        }
        s.stream.onClose { [weak self] in self?.remove(s) }
        startTicking()
    }

    func remove(_ s: Subscriber) {
        state.withLock { st in
            guard let key = st.subscribers.remove(s) else { return }
            st.morePages.remove(key)
            st.perClient[s.client, default: 1] -= 1
            if st.perClient[s.client] == 0 { st.perClient[s.client] = nil }
            for id in s.ids {
                st.watchers[id]?.remove(key)
                if st.watchers[id]?.isEmpty == true {
                    st.watchers[id] = nil
                    st.told[id] = nil
                    st.toldVersion[id] = nil
                    st.nextRead[id] = nil
                    st.catchUp[id] = nil
                    if let url = st.urlOf.removeValue(forKey: id) {
                        st.byURL[url]?.remove(id)
                        if st.byURL[url]?.isEmpty == true { st.byURL[url] = nil }
                    }
                }
            }
        }
    }

    /// A podcast's feed URL, normalised: a feed id's is its registry answer's, a directory
    /// podcast's its lookup answer's (as cached).
    private func feedURL(of id: Int) -> String? {
        switch cache.lookup(PodcastAdapter.cacheKey(id)) {
        case .fresh(let entry), .stale(let entry):
            guard case .feed(let url, _)? = EpisodesAdapter.listed(fromPodcastAnswer: entry.body) else { return nil }
            return FeedID.normalised(url)
        case .miss:
            return nil
        }
    }
}
