/// An upstream list whose elements that fail to decode (an id past Int.max, a wrong type
/// where a value is required) are dropped one by one instead of failing the whole answer.
package struct DroppingInvalid<Element: Decodable>: Decodable {
    package let elements: [Element]

    package init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        var kept: [Element] = []
        kept.reserveCapacity(c.count ?? 0)
        while !c.isAtEnd {
            let before = c.currentIndex
            if let e = try? c.decode(Element.self) { kept.append(e) }
            // JSONValueDecoder moves past a failed element; a decoder that does not would loop.
            if c.currentIndex == before { break }
        }
        elements = kept
    }
}
