import RedisTier

public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
}
