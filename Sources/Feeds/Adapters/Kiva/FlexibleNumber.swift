import FeedFormats
import Primitives
import Upstream

/// A money amount Kiva may send as `"875.00"` or `875`; anything that is not a finite
/// amount in range (`"1e400"`, `"NaN"`, negative) reads as nil.
struct FlexibleNumber: Decodable {
    let value: Double?

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        // Strings first: GraphQL (the default API) sends money as "875.00", and a failed
        // decode attempt costs a thrown DecodingError.
        if c.decodeNil() {
            value = nil
        } else if let text = try? c.decode(String.self) {
            value = FeedNumber.amount(text.utf8.count <= 64 ? Double(text.trimmingWhitespace()) : nil)
        } else {
            value = FeedNumber.amount(try c.decode(Double.self))
        }
    }
}
