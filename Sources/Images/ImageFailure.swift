/// Why an image was not made (each maps to one documented error).
public enum ImageFailure: Error, Sendable, Equatable {
    /// Not one of the allowed kinds (`SourceImageType`), or libvips would pick another loader.
    case unsupportedType
    /// The header promises more pixels than `ImageLimits.maxPixels` (a decompression bomb, or just huge).
    case tooManyPixels(width: Int, height: Int)
    /// Damaged, truncated, or not what its header says.
    case undecodable
    /// Decoding and encoding took longer than `ImageLimits.timeout`.
    case timedOut
    /// Every decoder is busy and the queue is full.
    case busy
}
