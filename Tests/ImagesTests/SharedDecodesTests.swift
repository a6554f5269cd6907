import Images
import Primitives
import Synchronization
import Testing
import TestSupport

/// Resizes of one source asked while another waits for a decoder share its decode: every
/// width and encoding asked comes from it, each as it would have come alone.
@Suite(.offPool) struct SharedDecodesTests {
    let limits = ImageLimits(maxPixels: 40_000_000, timeout: 30)

    final class Decodes: Sendable {
        let answers = Locked<[Int]>([])
    }

    /// A pool of one decoder held busy until the gate opens, so that what is asked meanwhile waits.
    static func heldPool(_ gate: Gate) async -> DecodePool {
        let pool = DecodePool(threads: 1, maxQueued: 8)
        _ = pool.submit { gate.wait() }
        while pool.load.running == 0 { try? await Task.sleep(for: .milliseconds(1)) }
        return pool
    }

    @Test func threeWidthsAndEncodingsOfOnePNGAreOneDecode() async throws {
        let gate = Gate()
        let decodes = Decodes()
        let shared = SharedDecodes(pool: await Self.heldPool(gate)) { n in decodes.answers.withLock { $0.append(n) } }
        let source = artwork("logo-1400.png"), limits = self.limits
        let asked = [ImageRequest(width: 100, target: .webp), ImageRequest(width: 300, target: .png), ImageRequest(width: 600, target: .jpeg)]
        async let a = shared.transcode(key: "logo", source: source, asked[0], limits: limits)
        async let b = shared.transcode(key: "logo", source: source, asked[1], limits: limits)
        async let c = shared.transcode(key: "logo", source: source, asked[2], limits: limits)
        // All three wait behind the held decoder, then the gate opens.
        while shared.waiting(for: "logo") < 3 { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(shared.pool.load.waiting == 1, "one decode queued for the three")
        gate.open()
        let results = [await a, await b, await c]
        #expect(decodes.answers.withLock { $0 } == [3], "one decode made the three answers")
        // Seconds of pixel arithmetic in a debug build: not on the test pool.
        try await offPool {
            for (request, result) in zip(asked, results) {
                let image = try result.get()
                let alone = try ImageTranscoder.transcode(source, width: request.width, target: request.target, limits: limits)
                #expect(image.width == request.width && image.height == alone.height && image.encoding == alone.encoding)
                // The same picture: seen on white, nearly every pixel within a few levels of the one made alone.
                let (together, single) = (try #require(ImageTranscoder.rgbaPixels(image.bytes)), try #require(ImageTranscoder.rgbaPixels(alone.bytes)))
                let differences = zip(Self.onWhite(together.rgba), Self.onWhite(single.rgba)).map { abs($0 - $1) }.sorted()
                #expect(differences[differences.count * 99 / 100] <= 24, "the 99th percentile of the difference, \(request)")
            }
        }
    }

    /// Each colour as seen over white (an invisible pixel's colour is nobody's business).
    static func onWhite(_ rgba: [UInt8]) -> [Int] {
        stride(from: 0, to: rgba.count - 3, by: 4).flatMap { i in
            let a = Int(rgba[i + 3])
            return (0..<3).map { c in (Int(rgba[i + c]) * a + 255 * (255 - a)) / 255 }
        }
    }

    @Test func anotherSourceIsNotJoinedAndARequestAloneIsDecodedAtOnce() async throws {
        let gate = Gate()
        let decodes = Decodes()
        let shared = SharedDecodes(pool: await Self.heldPool(gate)) { n in decodes.answers.withLock { $0.append(n) } }
        let limits = self.limits
        async let png = shared.transcode(key: "logo", source: artwork("logo-1400.png"), ImageRequest(width: 100, target: .png), limits: limits)
        async let jpeg = shared.transcode(key: "cover", source: artwork("cover-3000.jpg"), ImageRequest(width: 100, target: .jpeg), limits: limits)
        while shared.pool.load.waiting < 2 { try? await Task.sleep(for: .milliseconds(1)) }
        gate.open()
        #expect(try await png.get().encoding == .png)
        #expect(try await jpeg.get().encoding == .jpeg)
        #expect(decodes.answers.withLock { $0.sorted() } == [1, 1])
        // Nothing waiting: a request is decoded at once, on its own.
        #expect(
            try await shared.transcode(key: "logo", source: artwork("logo-1400.png"), ImageRequest(width: 300, target: .webp), limits: limits).get().width
                == 300)
        #expect(decodes.answers.withLock { $0.count } == 3)
    }

    /// The same key is not enough: a refreshed source of the same size, or other limits, would
    /// otherwise be answered (and cached) from another decode.
    @Test func otherBytesOfTheSameSizeOrOtherLimitsAreNotJoined() async throws {
        let gate = Gate()
        let decodes = Decodes()
        let shared = SharedDecodes(pool: await Self.heldPool(gate)) { n in decodes.answers.withLock { $0.append(n) } }
        let source = artwork("logo-1400.png"), limits = self.limits
        var refreshed = source
        refreshed[refreshed.count / 2] ^= 0xFF
        var stricter = limits
        stricter.quality = 40
        async let a = shared.transcode(key: "logo", source: source, ImageRequest(width: 100, target: .webp), limits: limits)
        while shared.waiting(for: "logo") < 1 { try? await Task.sleep(for: .milliseconds(1)) }
        async let b = shared.transcode(key: "logo", source: refreshed, ImageRequest(width: 300, target: .webp), limits: limits)
        async let c = shared.transcode(key: "logo", source: source, ImageRequest(width: 300, target: .webp), limits: stricter)
        while shared.pool.load.waiting < 3 { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(shared.waiting(for: "logo") == 1, "neither joined the first")
        gate.open()
        _ = (await a, await b, await c)
        #expect(decodes.answers.withLock { $0 } == [1, 1, 1])
    }

    @Test func aSourceThatDoesNotDecodeFailsEveryoneWhoJoined() async {
        let gate = Gate()
        let shared = SharedDecodes(pool: await Self.heldPool(gate))
        let whole = artwork("cover-3000.jpg")
        let broken = Array(whole.prefix(whole.count / 2)), limits = self.limits
        async let a = shared.transcode(key: "broken", source: broken, ImageRequest(width: 100, target: .webp), limits: limits)
        async let b = shared.transcode(key: "broken", source: broken, ImageRequest(width: 300, target: .jpeg), limits: limits)
        while shared.waiting(for: "broken") < 2 { try? await Task.sleep(for: .milliseconds(1)) }
        gate.open()
        let results = [await a, await b]
        #expect(results.allSatisfy { if case .failure(.undecodable) = $0 { return true } else { return false } }, "\(results)")
    }

    @Test func aFullQueueIsBusyButJoiningNeedsNoPlace() async throws {
        let gate = Gate()
        let pool = DecodePool(threads: 1, maxQueued: 1)
        _ = pool.submit { gate.wait() }
        while pool.load.running == 0 { try? await Task.sleep(for: .milliseconds(1)) }
        let shared = SharedDecodes(pool: pool)
        let source = artwork("logo-1400.png"), limits = self.limits
        async let first = shared.transcode(key: "logo", source: source, ImageRequest(width: 100, target: .png), limits: limits)
        while pool.load.waiting == 0 { try? await Task.sleep(for: .milliseconds(1)) }
        // The queue is full: another source is refused, this one's other width joins.
        let other = await shared.transcode(key: "cover", source: artwork("cover-3000.jpg"), ImageRequest(width: 100, target: .jpeg), limits: limits)
        #expect({ if case .failure(.busy) = other { return true } else { return false } }(), "\(other)")
        async let joined = shared.transcode(key: "logo", source: source, ImageRequest(width: 300, target: .png), limits: limits)
        while shared.waiting(for: "logo") < 2 { try? await Task.sleep(for: .milliseconds(1)) }
        gate.open()
        #expect(try await first.get().width == 100)
        #expect(try await joined.get().width == 300)
    }
}
