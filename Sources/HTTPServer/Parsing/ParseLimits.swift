/// Bounds on what a client may send; past them the request is refused.
public struct ParseLimits: Sendable {
    public var maxRequestLineBytes = 8 * 1024
    public var maxHeaderBytes = 32 * 1024
    public var maxHeaderCount = 100
    public var maxBodyBytes = 1024 * 1024

    public init() {}
}
