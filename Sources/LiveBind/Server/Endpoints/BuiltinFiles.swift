import LiveBindEngine
internal import LiveBindHTTP
/// Serves files held in memory (the executable's built-in copy of `Public/`) the way ``StaticFiles``
/// serves a folder: `index.html` for `/` and folders, content types by extension, the same security
/// headers, and nothing that is not one of the files.
struct BuiltinFiles: Sendable {
    private let files: [String: [UInt8]]

    /// Files by path relative to the site's root, without a leading `/`.
    init(_ files: [String: [UInt8]]) {
        self.files = files
    }

    /// Answers a GET or HEAD for `request.path`; throws `RequestError.notFound` for anything else.
    func respond(to request: HTTPRequest) throws -> HTTPResponse {
        let relative = Router.segments(of: request.path).filter { !$0.isEmpty }.joined(separator: "/")
        let candidates =
            relative.isEmpty
            ? ["index.html"]
            : request.path.hasSuffix("/") ? [relative + "/index.html"] : [relative, relative + "/index.html"]
        guard let path = candidates.first(where: { files[$0] != nil }), let bytes = files[path] else {
            throw RequestError.notFound(path: request.path)
        }
        var headers = StaticFiles.securityHeaders
        headers.set("Content-Type", ContentType.forPath(path))
        return HTTPResponse(status: 200, headers: headers, body: .bytes(bytes))
    }
}
