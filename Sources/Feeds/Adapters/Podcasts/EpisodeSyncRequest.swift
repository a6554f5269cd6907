import EpisodeSync
import Primitives

/// `sync=`: the token an episodes answer gave, sent back for what is new or changed since.
public enum EpisodeSyncRequest {
    public static func parse(_ p: QueryParameters, since: Int?, cursor: EpisodeCursor?) throws(ClientError) -> SyncToken? {
        guard let text = p.value("sync") else { return nil }
        guard since == nil, cursor == nil else {
            throw .invalidParameter("sync takes no since or cursor: the token says where the answer starts (follow page.next)")
        }
        // `sync=` (empty): from no position at all, the recovery from a token that cannot be
        // used: every podcast whole, page by page, each with resync, and a token to keep.
        if text.isEmpty { return SyncToken() }
        do {
            return try SyncToken.decode(text)
        } catch {
            switch error {
            case .invalid:
                throw .invalidParameter(
                    "sync is not a token this service gave out; refresh with an empty sync= and follow page.next: every podcast comes whole, with resync")
            case .expired:
                throw ClientError(
                    status: 410, code: "sync_token_expired",
                    message: "this sync token's format is no longer read; refresh with an empty sync= and follow page.next: "
                        + "every podcast comes whole, with resync")
            }
        }
    }
}
