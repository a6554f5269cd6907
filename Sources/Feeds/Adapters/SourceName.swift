/// The upstreams by the names their rate limits, queues, breakers and metrics use, and the
/// `source` each answer names: one spelling for each.
public enum SourceName {
    public static let flickr = "flickr"
    public static let itunes = "itunes"
    public static let kiva = "kiva"
    /// Publishers' own RSS/Atom feeds (every host its own breaker).
    public static let episodes = "episodes"
    /// Publishers' images, resized (`/images`): every host its own breaker, like feeds.
    public static let images = "images"
}
