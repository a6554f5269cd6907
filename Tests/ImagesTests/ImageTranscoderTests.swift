import Foundation
import Images
import Primitives
import TestSupport
import Testing

func artwork(_ name: String) -> [UInt8] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return (try? Array(Data(contentsOf: root.appendingPathComponent("Fixtures/artwork").appendingPathComponent(name)))) ?? []
}

@Suite(.offPool) struct ImageTranscoderTests {
    let limits = ImageLimits(maxPixels: 40_000_000, timeout: 30)

    @Test func aLargeJPEGBecomesASmallWebPOfTheAskedWidth() throws {
        let source = artwork("cover-3000.jpg")
        #expect(source.count > 100_000)
        let image = try ImageTranscoder.transcode(source, width: 300, target: .webp, limits: limits)
        #expect(image.encoding == .webp && image.width == 300 && image.height == 300)
        #expect(Array(image.bytes.prefix(4)) == Array("RIFF".utf8) && Array(image.bytes[8..<12]) == Array("WEBP".utf8))
        #expect(image.bytes.count < 30_000)
    }

    @Test func transparencyIsKeptWhereTheClientTakesOnlyClassicFormats() throws {
        let png = try ImageTranscoder.transcode(artwork("logo-1400.png"), width: 120, target: .classic, limits: limits)
        #expect(png.encoding == .png && png.width == 120)
        #expect(Array(png.bytes.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
        let jpeg = try ImageTranscoder.transcode(artwork("cover-3000.jpg"), width: 120, target: .classic, limits: limits)
        #expect(jpeg.encoding == .jpeg && Array(jpeg.bytes.prefix(3)) == [0xFF, 0xD8, 0xFF])
        // Asked for JPEG by name, a transparent image is flattened.
        let flat = try ImageTranscoder.transcode(artwork("logo-1400.png"), width: 60, target: .jpeg, limits: limits)
        #expect(flat.encoding == .jpeg && flat.width == 60)
    }

    @Test(arguments: [ImageTarget.webp, .jpeg, .png, .avif])
    func metadataIsDropped(_ target: ImageTarget) throws {
        // libvips writes the EXIF it keeps for every image (resolution, and a camera's own)
        // unless removed; its 8.14 WebP saver ignores "strip".
        for name in ["cover-3000.jpg", "logo-1400.png"] {
            let image = try ImageTranscoder.transcode(artwork(name), width: 60, target: target, limits: limits)
            let text = String(decoding: image.bytes, as: UTF8.self)
            #expect(!text.contains("Exif") && !text.contains("EXIF") && !text.contains("http://ns.adobe.com/xap"), "\(name) as \(target)")
            // And what is left is still an image.
            #expect(try ImageTranscoder.transcode(image.bytes, width: 60, target: .png, limits: limits).width == 60)
        }
    }

    /// A transparent pixel's colour is invisible: shrunk next to an opaque one, it must not
    /// tint it (the edge of a logo on a transparent background). Widths that box by 2 and by 3
    /// (a last block one column wide), and 48, which libvips' own thumbnail makes.
    @Test(arguments: [30, 20, 48])
    func invisibleColoursDoNotBleedIntoVisibleOnes(_ width: Int) throws {
        let image = try ImageTranscoder.transcode(artwork("edge-64.png"), width: width, target: .png, limits: limits)
        #expect(image.width == width && image.height == width)
        let pixels = try #require(ImageTranscoder.rgbaPixels(image.bytes))
        #expect(pixels.width == width && pixels.height == width)
        var visible = 0
        for i in stride(from: 0, to: pixels.rgba.count, by: 4) where pixels.rgba[i + 3] > 0 {
            visible += 1
            #expect(pixels.rgba[i + 1] <= 2, "green \(pixels.rgba[i + 1]) at alpha \(pixels.rgba[i + 3])")
            #expect(pixels.rgba[i] >= 250, "red \(pixels.rgba[i]) at alpha \(pixels.rgba[i + 3])")
        }
        #expect(visible >= width * width / 2)
        // The left edge is opaque red, the right edge transparent.
        #expect(Array(pixels.rgba[0..<4]) == [255, 0, 0, 255])
        #expect(pixels.rgba[(width - 1) * 4 + 3] == 0)
    }

    @Test func aSixteenBitImageBecomesEightBitWithItsTones() throws {
        let image = try ImageTranscoder.transcode(artwork("grey16-64.png"), width: 30, target: .png, limits: limits)
        let pixels = try #require(ImageTranscoder.rgbaPixels(image.bytes))
        #expect(pixels.width == 30 && pixels.height == 30)
        // A left-to-right ramp from black to white: its ends stay its ends, in order.
        let row = stride(from: 0, to: 30 * 4, by: 4).map { pixels.rgba[$0] }
        #expect(row.first ?? 255 <= 16 && row.last ?? 0 >= 235, "\(row)")
        #expect(zip(row, row.dropFirst()).allSatisfy { $0 <= $1 }, "\(row)")
    }

    @Test func neverEnlarged() throws {
        let image = try ImageTranscoder.transcode(artwork("square-600.webp"), width: 1200, target: .webp, limits: limits)
        #expect(image.width == 600 && image.height == 600)
    }

    @Test func aGIFGivesItsFirstFrame() throws {
        let image = try ImageTranscoder.transcode(artwork("small-100.gif"), width: 60, target: .png, limits: limits)
        #expect(image.width == 60 && image.height == 60)
    }

    @Test func avifIsMadeWhereLibvipsOffersIt() throws {
        // Debian's libvips42 has the HEIF module with libaom: AVIF here, and in CI.
        #expect(ImageTranscoder.encodesAVIF)
        let image = try ImageTranscoder.transcode(artwork("square-600.webp"), width: 60, target: .avif, limits: limits)
        #expect(image.encoding == .avif && String(decoding: image.bytes[4..<8], as: UTF8.self) == "ftyp")
    }

    @Test func hostileFilesAreRefusedWithTheirReason() {
        #expect(throws: ImageFailure.tooManyPixels(width: 50000, height: 50000)) {
            try ImageTranscoder.transcode(artwork("bomb.png"), width: 60, target: .webp, limits: limits)
        }
        #expect(throws: ImageFailure.undecodable) { try ImageTranscoder.transcode(artwork("truncated.jpg"), width: 60, target: .webp, limits: limits) }
        #expect(throws: ImageFailure.undecodable) { try ImageTranscoder.transcode(artwork("lying.png"), width: 60, target: .webp, limits: limits) }
        #expect(throws: ImageFailure.unsupportedType) { try ImageTranscoder.transcode(artwork("vector.svg"), width: 60, target: .webp, limits: limits) }
        #expect(throws: ImageFailure.unsupportedType) {
            try ImageTranscoder.transcode(Array("<html>not found</html>".utf8), width: 60, target: .webp, limits: limits)
        }
        #expect(throws: ImageFailure.unsupportedType) { try ImageTranscoder.transcode([], width: 60, target: .webp, limits: limits) }
    }

    @Test func thePixelLimitIsTheSetting() throws {
        let small = ImageLimits(maxPixels: 1_000_000, timeout: 30)
        #expect(throws: ImageFailure.tooManyPixels(width: 3000, height: 3000)) {
            try ImageTranscoder.transcode(artwork("cover-3000.jpg"), width: 60, target: .webp, limits: small)
        }
        _ = try ImageTranscoder.transcode(artwork("square-600.webp"), width: 60, target: .webp, limits: small)
    }

    @Test func workPastTheDeadlineIsStopped() {
        // A millisecond cannot decode 9 million pixels: the eval callback stops it.
        let hurried = ImageLimits(maxPixels: 40_000_000, timeout: 0.001)
        for name in ["cover-3000.jpg", "logo-1400.png"] {
            #expect(throws: ImageFailure.timedOut, "\(name)") { try ImageTranscoder.transcode(artwork(name), width: 1200, target: .png, limits: hurried) }
        }
    }

    @Test func everyPrefixOfAnImageIsAnErrorOrAnImageNeverACrash() {
        let source = artwork("square-600.webp") + artwork("small-100.gif")
        for cut in stride(from: 0, to: source.count, by: 97) {
            _ = try? ImageTranscoder.transcode(Array(source.prefix(cut)), width: 60, target: .jpeg, limits: limits)
        }
    }
}

@Suite(.offPool) struct ImageTargetTests {
    @Test(arguments: [
        ("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", ImageTarget.webp),  // Chromium
        ("image/webp,*/*", .webp),
        ("image/avif,image/*;q=0.8", .avif),
        ("image/png,image/*;q=0.8,*/*;q=0.5", .classic),  // an old Safari
        ("*/*", .classic),
        ("image/webp;q=0, image/avif;q=0.000", .classic),
        ("IMAGE/WEBP ; Q=0.5", .webp),
    ])
    func acceptChoosesTheEncoding(_ accept: String, _ expected: ImageTarget) {
        #expect(ImageTarget.negotiate(accept: accept) == expected)
    }

    @Test func noAcceptGetsWhatEveryClientDecodes() { #expect(ImageTarget.negotiate(accept: nil) == .classic) }

    @Test func avifIsNeverChosenWhereItCannotBeWritten() {
        #expect(ImageTarget.negotiate(accept: "image/avif,image/*;q=0.8", avif: false) == .classic)
        #expect(ImageTarget.negotiate(accept: "image/avif,image/webp", avif: false) == .webp)
    }
}

@Suite(.offPool) struct DecodePoolTests {
    @Test func aFullPoolSaysBusyInsteadOfQueueingWithoutBound() async throws {
        let pool = DecodePool(threads: 1, maxQueued: 1)
        let gate = Gate()
        let ran = Locked<[Int]>([])
        #expect(
            pool.submit {
                gate.wait(); ran.withLock { $0.append(1) }
            })
        while pool.load.running == 0 { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(pool.submit { ran.withLock { $0.append(2) } }, "one may wait")
        #expect(!pool.submit { ran.withLock { $0.append(3) } }, "the next is refused, not queued")
        gate.open()
        var waited = 0  // up to a minute for the pool thread, on a busy machine
        while ran.withLock({ $0.count }) < 2, waited < 60_000 {
            try await Task.sleep(for: .milliseconds(1))
            waited += 1
        }
        #expect(ran.withLock { $0 } == [1, 2])
    }
}

/// A blocking gate a pool thread waits at.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false
    func wait() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }
    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }
}
