/// A local write on its way to the server, from the commit (or ``ServerMirror/set(_:at:ifMatch:)``) that
/// made it until the stream has shown its result.
struct PendingWrite: Sendable {
    enum Phase: Sendable, Equatable {
        /// Not sent yet.
        case waiting
        case sending
        /// In the offline queue.
        case queued
        /// Applied by the server with this commit id and revision (at this time), its event awaited.
        case answered(id: UInt64, revision: UInt64, at: ContinuousClock.Instant)
    }

    let number: Int
    /// The local model it changed, and the target it is inside.
    let localModel: String
    let target: Int
    let method: String
    let path: String
    let body: JSON?
    let contentType: String
    /// Whether it goes with `If-Match` (the revision it was made against).
    let ifMatch: Bool
    let key: String
    var phase: Phase = .waiting
}

/// The path of a location of a model on the server: `/models/<model>` and the pointer's tokens,
/// each percent-encoded (`~0`/`~1` escaped first).
func modelPath(_ model: String, _ path: Path) -> String {
    "/models/" + percentEncoded(model)
        + path.components.map {
            "/" + percentEncoded($0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1"))
        }.joined()
}

/// `text` percent-encoded byte by byte (UTF-8), keeping RFC 3986's unreserved characters and, with
/// `keepingSlash`, `/` (a query value's `sub=model/pointer`).
func percentEncoded(_ text: String, keepingSlash: Bool = false) -> String {
    var encoded = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            encoded.unicodeScalars.append(Unicode.Scalar(byte))
        case UInt8(ascii: "/") where keepingSlash:
            encoded.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
        }
    }
    return encoded
}
