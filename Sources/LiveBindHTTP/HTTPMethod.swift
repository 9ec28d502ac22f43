/// An HTTP request method such as `GET` or `PATCH`; unknown methods keep their spelling.
///
/// Public, not `package`, for `RequestError` (see there).
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token as it appeared on the request line.
    public var rawValue: String

    /// Wraps a method token.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The method token.
    public var description: String { rawValue }

    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    /// Whether a request with this method is expected to carry a body.
    var expectsBody: Bool { self == .put || self == .post || self == .patch }
}
