import Foundation

/// Reads a file from the repository's Fixtures/ directory.
func fixture(_ path: String) -> [UInt8] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return (try? Array(Data(contentsOf: root.appendingPathComponent("Fixtures").appendingPathComponent(path)))) ?? []
}

func json(_ bytes: [UInt8]) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
}
