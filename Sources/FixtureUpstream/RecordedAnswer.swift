import FoundationEssentials

/// Upstreams the fixture upstream answers from their recorded files alone: a folder's
/// `answers.json` maps each path the upstream is asked at to a file beside it and its
/// Content-Type (`{"/news/v2/top": {"file": "top.json", "type": "application/json"}}`), so a
/// new upstream's fixtures need no code here. Requests are counted under the folder's name.
struct RecordedAnswer: Sendable {
    let path: String
    let folder: String
    let file: String
    let type: String

    private struct Entry: Decodable {
        let file: String
        let type: String
    }

    /// Every `answers.json` under `directory`, one folder down.
    static func all(in directory: URL) throws -> [RecordedAnswer] {
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var answers: [RecordedAnswer] = []
        for folder in folders.sorted() {
            let manifest = directory.appendingPathComponent(folder).appendingPathComponent("answers.json")
            guard let data = try? Data(contentsOf: manifest) else { continue }
            for (path, entry) in try JSONDecoder().decode([String: Entry].self, from: data).sorted(by: { $0.key < $1.key }) {
                answers.append(RecordedAnswer(path: path, folder: folder, file: entry.file, type: entry.type))
            }
        }
        return answers
    }
}
