/// Bounds on one image's work: what is decoded at all, how tall an answer may be, how long it may take.
public struct ImageLimits: Sendable, Equatable {
    /// Width × height from the header, before any pixel is decoded.
    public var maxPixels: Int
    /// An answer is at most this many times as tall as it is wide (a 1×100000 strip resized
    /// to 600 px wide would otherwise be 60 million pixels).
    public var maxAspect = 4
    /// Seconds for decoding and encoding one answer (a decode shared by several answers has
    /// them for the decode, and each answer again for its own resize and encode).
    public var timeout: Double
    public var quality: Int32 = 80

    public init(maxPixels: Int, timeout: Double) {
        self.maxPixels = maxPixels
        self.timeout = timeout
    }
}
