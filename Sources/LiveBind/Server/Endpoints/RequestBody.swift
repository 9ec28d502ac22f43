import LiveBindEngine
internal import LiveBindHTTP
/// Reading request bodies: JSON, and `application/x-www-form-urlencoded`.
enum RequestBody {
    /// Media types that carry plain JSON.
    static let json = "application/json"
    /// RFC 7386.
    static let mergePatch = "application/merge-patch+json"
    /// RFC 6902.
    static let jsonPatch = "application/json-patch+json"
    /// HTML forms and `curl -d`.
    static let form = "application/x-www-form-urlencoded"
    /// `[json]`, made once: an array literal at each call would be an allocation per write.
    static let jsonOnly = [json]

    /// The body's media type, which must be one of `accepted` (415 otherwise).
    static func mediaType(of request: HTTPRequest, accepted: [String]) throws(RequestError) -> String {
        guard let type = request.mediaType, accepted.contains(type) else {
            throw .unsupportedMediaType(given: request.headers["Content-Type"], accepted: accepted)
        }
        return type
    }

    /// The body parsed as one JSON value (400 when malformed).
    static func parseJSON(_ request: HTTPRequest) throws(RequestError) -> JSON {
        do {
            return try JSON(parsing: request.body)
        } catch {
            throw .malformedBody("not valid JSON: \(error)")
        }
    }

    /// `If-Match: "<rev>"` as a revision; nil when absent or `*`.
    ///
    /// The tag must be an ETag the server gives, the revision's digits as it writes them: `"03"` and
    /// `"+3"` are not `"3"` (an ETag compares as a string), so they are refused, not read as revision 3.
    static func ifMatch(_ request: HTTPRequest) throws(RequestError) -> UInt64? {
        guard let raw = request.headers["If-Match"]?.trimmingWhitespace() else { return nil }
        if raw == "*" { return nil }
        var tag = Substring(raw)
        let weak = tag.hasPrefix("W/")
        if weak { tag = tag.dropFirst(2) }
        let digits = tag.dropFirst().dropLast()
        guard tag.count >= 3, tag.first == "\"", tag.last == "\"", let revision = UInt64(digits),
            digits == Substring(String(revision))
        else {
            throw .invalidPrecondition(raw)
        }
        // If-Match compares strongly (RFC 9110 13.1.1): a weak tag matches nothing.
        if weak { throw .weakPrecondition(raw) }
        return revision
    }
}
