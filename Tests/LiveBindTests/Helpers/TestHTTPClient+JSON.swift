import Foundation

extension TestHTTPClient {
    /// A request with a JSON (or other) text body and its media type.
    static func send(
        port: Int, _ method: String, _ target: String, _ text: String,
        type: String = "application/json", headers: [(String, String)] = []
    ) throws -> TestHTTPResponse {
        try request(port: port, method, target, headers: [("Content-Type", type)] + headers, text: text)
    }

    /// `GET target` parsed as a JSON object.
    static func getObject(port: Int, _ target: String) throws -> [String: Any] {
        try request(port: port, "GET", target).object()
    }

    /// `bytes` in chunked transfer encoding, `size` bytes per chunk, with the final empty chunk.
    static func chunked(_ bytes: [UInt8], size: Int) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        while start < bytes.count {
            let piece = bytes[start..<min(start + size, bytes.count)]
            out += Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
            start += size
        }
        return out + Array("0\r\n\r\n".utf8)
    }
}

extension TestHTTPResponse {
    /// Whether this is an RFC 9457 problem with the given status and all four members.
    func isProblem(_ status: Int) -> Bool {
        guard self.status == status, header("Content-Type") == "application/problem+json",
            let problem = try? object()
        else { return false }
        return problem["status"] as? Int == status && problem["type"] is String
            && problem["title"] is String && (problem["detail"] as? String)?.isEmpty == false
    }
}
