import Primitives
import TestSupport
import Testing

@Suite(.offPool) struct RepresentationTests {
    static let body = Array(String(repeating: #"{"id":1,"title":"a"},"#, count: 40).utf8)

    /// The gzip variant is a representation of its own (its own tag and lines); the identity
    /// one is shared, not worked out again.
    @Test func theGzipVariantSharesTheIdentityAndAddsItsOwnTag() throws {
        let plain = Representation(Self.body, link: "</p?page=2>; rel=\"next\"")
        #expect(plain.gzippedBody == nil && plain.gzipHeaderLines.isEmpty && plain.compressible)
        let both = plain.compressed()
        let gzip = try #require(both.gzippedBody)
        #expect(Gzip.decompress(gzip, maxBytes: 1 << 20) == Self.body)
        #expect(both.etag == plain.etag && both.headerLines == plain.headerLines)
        #expect(both.gzipETag == String(plain.etag.dropLast()) + "-gz\"")
        let lines = String(decoding: both.gzipHeaderLines, as: UTF8.self)
        #expect(lines == "ETag: \(both.gzipETag)\r\nLink: </p?page=2>; rel=\"next\"\r\nContent-Type: \(MediaType.json)\r\n")
        #expect(both.compressed() === both)
    }

    /// An image is chosen by `Accept` and never compressed again; an error's representation
    /// sends no validator.
    @Test func imagesAreNotCompressedAndErrorsCarryNoValidator() {
        let image = Representation([0xFF, 0xD8, 0xFF], contentType: "image/jpeg")
        #expect(image.compressed() === image && !image.compressible && !image.isJSON)
        #expect(String(decoding: image.headerLines, as: UTF8.self) == "ETag: \(image.etag)\r\nVary: Accept\r\nContent-Type: image/jpeg\r\n")
        let missing = Representation(Array(#"{"error":{}}"#.utf8), status: 404)
        #expect(String(decoding: missing.compressed().gzipHeaderLines, as: UTF8.self) == "Content-Type: \(MediaType.json)\r\n")
    }
}
