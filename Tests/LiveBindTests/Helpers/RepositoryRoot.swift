import Foundation

/// The repository's root folder (the one holding Package.swift), found from the calling test's own
/// file, so tests that read README.md, docs/ or Public/ do not depend on how deep they sit.
func repositoryRoot(_ file: String = #filePath) -> URL {
    var folder = URL(fileURLWithPath: file).deletingLastPathComponent()
    while folder.path != "/", !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
        folder = folder.deletingLastPathComponent()
    }
    return folder
}
