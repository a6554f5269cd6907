import Observability
import Primitives
import Feeds
import Images

/// What the image proxy did, for `/metrics` (rendered only when it is on).
final class ImageMetrics: MetricsPart {
    /// Source images resized, and refused by reason.
    let outcomes = Tally(["resized", "unsupported_type", "too_many_pixels", "undecodable", "timed_out", "busy"])
    let bytesIn = Counter()
    let bytesOut = Counter()
    let seconds = Histogram(bounds: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])
    /// Decodes of a source, and the answers they made (more answers than decodes: shared).
    let sourceDecodes = Counter()
    let sharedAnswers = Counter()
    let pool: DecodePool

    init(pool: DecodePool) { self.pool = pool }

    func record(_ event: ImageDecodeEvent) {
        switch event {
        case .decoded(let bytesIn, let bytesOut, let seconds):
            outcomes.add("resized")
            self.bytesIn.add(bytesIn)
            self.bytesOut.add(bytesOut)
            self.seconds.observe(seconds)
        case .refused(let reason):
            outcomes.add(reason)
        }
    }

    func recordSourceDecode(answers: Int) {
        sourceDecodes.add(1)
        sharedAnswers.add(answers)
    }

    func render(into out: inout String) {
        outcomes.render("feedproxy_image_decodes_total", "Source images resized (outcome=\"resized\") or refused, by reason.", into: &out)
        Self.counter("feedproxy_image_source_bytes_total", "Bytes of source images resized.", bytesIn.current, into: &out)
        Self.counter("feedproxy_image_output_bytes_total", "Bytes of the images made from them.", bytesOut.current, into: &out)
        out += "# HELP feedproxy_image_resize_seconds Time from the decode pool's turn to the encoded image (waiting included).\n"
        out += "# TYPE feedproxy_image_resize_seconds histogram\n"
        seconds.render("feedproxy_image_resize_seconds", labels: "", into: &out)
        Self.counter(
            "feedproxy_image_source_decodes_total", "Decodes of source images, failed ones too; concurrent resizes of one source share one.",
            sourceDecodes.current,
            into: &out)
        Self.counter(
            "feedproxy_image_source_decode_answers_total", "Answers asked of those decodes (each width and encoding).", sharedAnswers.current,
            into: &out)
        let load = pool.load
        out += "# HELP feedproxy_image_decodes_in_progress Images being resized, and waiting for a decoder.\n"
        out += "# TYPE feedproxy_image_decodes_in_progress gauge\n"
        out += "feedproxy_image_decodes_in_progress{state=\"running\"} \(load.running)\n"
        out += "feedproxy_image_decodes_in_progress{state=\"waiting\"} \(load.waiting)\n"
    }

    /// One unlabelled counter with its HELP and TYPE lines.
    private static func counter(_ name: String, _ help: String, _ value: Int, into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
    }
}
