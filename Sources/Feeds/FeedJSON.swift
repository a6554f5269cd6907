import FeedFormats
import Primitives
import Upstream

/// JSON for responses (streamed, keys in declaration order) and from upstreams.
public enum FeedJSON {
    public static func encode<T: Encodable>(_ value: T) throws(ClientError) -> [UInt8] {
        let encoder = JSONStreamEncoder()
        do {
            try encoder.write(value)
            return encoder.finish()
        } catch {
            throw ClientError(status: 500, code: "encoding_failed", message: "response could not be encoded")
        }
    }

    /// Decodes upstream bytes; any failure is the upstream's fault (502), never a crash.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>, source: String) throws(ClientError) -> T {
        do {
            return try JSONValueDecoder.decode(T.self, from: bytes)
        } catch {
            throw .badUpstreamResponse(source)
        }
    }
}
