import Foundation

/// embed-public OUTPUT FOLDER FILE…: writes a Swift file declaring `builtinPublicFiles`, each FILE
/// (relative to FOLDER) with its bytes in base64. A base64 string literal compiles in a moment,
/// where an array literal of the same bytes would take the type checker minutes. An `@main` type rather
/// than top-level code, so builds that pass `-parse-as-library` to every target (the fuzz build) build it.
@main enum EmbedPublic {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3 else {
            FileHandle.standardError.write(Data("usage: embed-public OUTPUT FOLDER FILE...\n".utf8))
            exit(2)
        }
        let folder = URL(fileURLWithPath: arguments[2])
        var source = """
            // Generated at build time from Public/ by the EmbedPublic plugin (Sources/embed-public). Do not edit.

            /// Every file of `Public/` as it was at build time: its path relative to `Public/` and its bytes in base64.
            let builtinPublicFiles: [(path: String, base64: String)] = [

            """
        for relative in arguments.dropFirst(3) {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(relative))
            let quoted = relative.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            source += "    (\"\(quoted)\", \"\(bytes.base64EncodedString())\"),\n"
        }
        source += "]\n"
        let output = URL(fileURLWithPath: arguments[1])
        // Rewriting identical bytes would make the compiler run again for nothing.
        if (try? Data(contentsOf: output)) != Data(source.utf8) {
            try Data(source.utf8).write(to: output, options: .atomic)
        }
    }
}
