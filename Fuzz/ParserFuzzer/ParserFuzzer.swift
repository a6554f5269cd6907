import Feeds
import HTTPServer
import Service

#if FUZZING
    // SwiftPM links executables with `main` aliased to `ParserFuzzer_main`, so instead of
    // libFuzzer's own main we start its driver from here (`make fuzz` builds with
    // -sanitize=fuzzer,address -D FUZZING).
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// Every declared upstream's fuzz entry but the images' (which has its own first byte).
    let feedBodies = UpstreamCatalog.fuzzEntries(excluding: [SourceName.images])

    @_cdecl("ParserFuzzer_main")
    func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        var count = argc
        var vector = argv
        // The declarations (and their API descriptions) are built before the driver starts
        // counting allocations per input: a lazy global first touched by an input would be
        // taken for that input's leak.
        _ = feedBodies
        return LLVMFuzzerRunDriver(&count, &vector) { data, size in
            guard let data, size > 0 else { return 0 }
            // The first byte picks the target: below 0x80 the HTTP request parser (which also
            // uses it as a split point), 0xF0 and up the image path, 0xE0–0xEF the show notes
            // sanitizer's fast path against its full one, else every other declared upstream's
            // answers end to end.
            if data[0] >= 0xE0 && data[0] < 0xF0 {
                if let finding = FeedFuzzing.sanitizerDifference(data[0], Array(UnsafeBufferPointer(start: data + 1, count: size - 1))) {
                    fatalError(finding)  // a finding stops libFuzzer and saves the input
                }
            } else if data[0] >= 0xF0 {
                if let finding = UpstreamCatalog.fuzz(Array(UnsafeBufferPointer(start: data + 1, count: size - 1)), source: SourceName.images) {
                    fatalError(finding)  // a finding stops libFuzzer and saves the input
                }
            } else if data[0] < 0x80 {
                if let finding = ParserFuzzing.run(UnsafeBufferPointer(start: data, count: size)) {
                    fatalError(finding)  // the fuzzer's own binary only: stops libFuzzer and saves the input
                }
            } else {
                if let finding = FeedFuzzing.run(Array(UnsafeBufferPointer(start: data + 1, count: size - 1)), bodies: feedBodies) {
                    fatalError(finding)  // a finding stops libFuzzer and saves the input
                }
            }
            return 0
        }
    }
#else
    /// In an ordinary build this target only explains itself.
    @main
    enum ParserFuzzerMain {
        static func main() {
            print("Build and run with `make fuzz` (libFuzzer needs -sanitize=fuzzer).")
        }
    }
#endif
