import Foundation
import PackagePlugin

/// Builds `Public/` into the target that uses this plugin: every file under it becomes an entry of
/// `builtinPublicFiles` in a generated Swift file, remade whenever a file there changes, is added or
/// is removed. Nothing generated is committed, so the binary's copy cannot fall behind the folder.
@main
struct EmbedPublic: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.package.directoryURL.appending(path: "Public")
        let files = try Self.files(under: folder)
        let output = context.pluginWorkDirectoryURL.appending(path: "BuiltinPublicFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) files from Public/",
                executable: try context.tool(named: "embed-public").url,
                arguments: [output.path, folder.path] + files.map(\.relative),
                inputFiles: files.map { folder.appending(path: $0.relative) },
                outputFiles: [output])
        ]
    }

    /// Regular files under `folder` (hidden ones left out), as paths relative to it, sorted.
    private static func files(under folder: URL) throws -> [(relative: String, url: URL)] {
        let keys: [URLResourceKey] = [.isRegularFileKey]
        guard
            let walk = FileManager.default.enumerator(
                at: folder, includingPropertiesForKeys: keys,
                options: [.skipsHiddenFiles])
        else { return [] }
        let root = folder.standardizedFileURL.path + "/"
        var found: [(relative: String, url: URL)] = []
        for case let url as URL in walk where try url.resourceValues(forKeys: Set(keys)).isRegularFile == true {
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(root) else { continue }
            found.append((String(path.dropFirst(root.count)), url))
        }
        return found.sorted { $0.relative < $1.relative }
    }
}
