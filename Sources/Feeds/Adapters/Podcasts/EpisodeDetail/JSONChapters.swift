import FeedFormats
import Primitives

/// The Podcasting 2.0 JSON chapters file (`application/json+chapters`):
/// `{"version": "1.2.0", "chapters": [{"startTime", "endTime", "title", "img", "url", "toc"}]}`.
/// Times in seconds; relative `img`/`url` resolve against the file's address.
enum JSONChapters {
    static func read(_ bytes: [UInt8], url: String, duration: Double?) throws(ClientError) -> [ChapterMark] {
        guard let document = try? JSONParser.parse(TranscriptText.withoutBOM(bytes)) else {
            throw EpisodePart.unreadable("chapters", "the chapters file is not JSON")
        }
        guard case .array(let items)? = document["chapters"] else {
            throw EpisodePart.unreadable("chapters", "the chapters file has no \"chapters\" list")
        }
        var marks: [ChapterMark] = []
        for item in items.prefix(ChapterList.maxChapters) {
            guard let start = item["startTime"]?.finiteNumber else { continue }
            marks.append(
                ChapterMark(
                    start: start, end: item["endTime"]?.finiteNumber, title: ChapterList.plainTitle(item["title"]?.text),
                    url: item["url"]?.text.flatMap { URLReference.absolute($0, base: url) },
                    imageUrl: item["img"]?.text.flatMap { URLReference.absolute($0, base: url) }, toc: item["toc"]?.flag ?? true))
        }
        return ChapterList.normalised(marks, duration: duration)
    }
}
