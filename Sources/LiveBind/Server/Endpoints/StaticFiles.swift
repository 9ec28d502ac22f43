#if canImport(Glibc)
import Glibc
#endif
import LiveBindEngine
internal import LiveBindHTTP

/// Serves files from one directory: `index.html` for `/` and folders, content types by extension,
/// security headers, and nothing outside the directory (no `..`, no symlinks pointing out).
struct StaticFiles: Sendable {
    /// The directory's canonical path (symlinks resolved), without a trailing slash.
    let root: String
    /// The headers every file from it carries: ``securityHeaders`` with its own policy.
    let headers: HTTPHeaders

    /// Opens a directory whose files go out with `contentSecurityPolicy` (none when empty); throws
    /// when the policy is not one header line of printable ASCII. The corresponding C function is `realpath`.
    init(directory: String, contentSecurityPolicy: String = Self.defaultContentSecurityPolicy) throws(ServerError) {
        guard contentSecurityPolicy.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw .invalidConfiguration(
                ConfigurationError(
                    flag: "content-security-policy",
                    reason: "must be one header line of printable ASCII"))
        }
        guard let resolved = Self.realPath(directory), Self.isDirectory(resolved) else {
            throw .publicDirectoryMissing(directory)
        }
        root = resolved == "/" ? "" : resolved
        var headers = Self.securityHeaders
        if contentSecurityPolicy.isEmpty {
            headers.remove("Content-Security-Policy")
        } else {
            headers.set("Content-Security-Policy", contentSecurityPolicy)
        }
        self.headers = headers
    }

    /// Only the site's own scripts, styles, images (and `data:` images) and connections; no inline
    /// style or script, no plug-ins, no framing.
    static let defaultContentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// Headers every static response carries (the built-in files' too), with the default policy.
    static let securityHeaders: HTTPHeaders = [
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": defaultContentSecurityPolicy,
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache"
    ]

    /// Answers a GET or HEAD for `request.path`; throws `RequestError.notFound` for anything else.
    func respond(to request: HTTPRequest) throws -> HTTPResponse {
        let segments = Router.segments(of: request.path).filter { !$0.isEmpty }
        for segment in segments {
            let lower = segment.lowercased()
            if segment == ".." || segment == "." || lower.contains("%2e") || lower.contains("%2f")
                || segment.contains("\\") || segment.contains("\0")
            {
                throw RequestError.notFound(path: request.path)
            }
        }
        var relative = segments.joined(separator: "/")
        if relative.isEmpty || request.path.hasSuffix("/") {
            relative += relative.isEmpty ? "index.html" : "/index.html"
        }
        guard var resolved = Self.realPath(root + "/" + relative), resolved.hasPrefix(root + "/") else {
            throw RequestError.notFound(path: request.path)
        }
        if Self.isDirectory(resolved) {
            guard let index = Self.realPath(resolved + "/index.html"), index.hasPrefix(root + "/") else {
                throw RequestError.notFound(path: request.path)
            }
            resolved = index
        }
        guard let bytes = Self.readFile(resolved) else { throw RequestError.notFound(path: request.path) }
        var headers = headers
        headers.set("Content-Type", ContentType.forPath(resolved))
        return HTTPResponse(status: 200, headers: headers, body: .bytes(bytes))
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Reads a regular file whole. The corresponding C functions are `open`, `fstat`, `read`.
    private static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count <= 0 { return count == 0 ? Array(bytes.prefix(filled)) : nil }
            filled += count
        }
        return bytes
    }
}
