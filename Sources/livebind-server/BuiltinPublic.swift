import Foundation

/// The files of `Public/` built into this executable (by the EmbedPublic plugin), decoded.
enum BuiltinPublic {
    /// Every built-in file by its path relative to `Public/`.
    static func files() -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for (path, base64) in builtinPublicFiles {
            guard let bytes = Data(base64Encoded: base64) else {
                preconditionFailure("the generated copy of Public/\(path) is not base64")
            }
            files[path] = Array(bytes)
        }
        return files
    }
}
