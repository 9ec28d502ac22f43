import Foundation
import LiveBind
@testable import LiveBindEngine
import Testing

/// RFC 9112 framing: a request whose body's end is in doubt is refused and its connection closed, so
/// that a request smuggled after it (which a proxy in front might have read differently) never runs.
@Suite("Request framing") struct RequestFramingTests {
    struct Case: CustomStringConvertible {
        var name: String
        var headers: String
        var body: String
        var status: Int
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "two Content-Length fields, 3 and 40", headers: "Content-Length: 3\r\nContent-Length: 40\r\n",
            body: "123", status: 400),
        Case(
            name: "the same Content-Length twice", headers: "Content-Length: 3\r\nContent-Length: 3\r\n",
            body: "123", status: 400),
        Case(
            name: "Content-Length with chunked", headers: "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
            body: "3\r\n123\r\n0\r\n\r\n", status: 400),
        Case(
            name: "chunked twice in one field", headers: "Transfer-Encoding: chunked, chunked\r\n",
            body: "3\r\n123\r\n0\r\n\r\n", status: 400),
        Case(
            name: "chunked in two fields", headers: "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
            body: "3\r\n123\r\n0\r\n\r\n", status: 400),
        Case(name: "a coding other than chunked", headers: "Transfer-Encoding: gzip\r\n", body: "123", status: 501),
        Case(
            name: "chunked then another coding", headers: "Transfer-Encoding: chunked, identity\r\n",
            body: "3\r\n123\r\n0\r\n\r\n", status: 501)
    ]

    @Test(arguments: cases)
    func ambiguousFramingIsRefusedAndTheConnectionClosed(_ testCase: Case) throws {
        let store = Store()
        try store.put("m", ["n": 0])
        try withRunningServer(store: store) { port in
            let socket = try TestSocket(port: port, timeout: 10)
            let head = "PUT /models/m/n HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
            // The request in doubt, then one smuggled behind it on the same connection.
            let smuggled =
                "PUT /models/m/n HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\n\r\n99"
            try? socket.send(head + testCase.headers + "\r\n" + testCase.body + smuggled)
            let response = try TestHTTPClient.readResponse(from: socket, method: "PUT")
            #expect(response.status == testCase.status)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(response.header("Connection")?.lowercased() == "close")
            // Nothing more on this connection: it is closed, and the smuggled request never ran.
            #expect(try socket.readToEnd().isEmpty)
            #expect(try store.value(of: "m") == ["n": 0])
            #expect(store.lastSequence == 1)
            // The server answers the next, well-framed request as usual.
            let fine = try TestHTTPClient.request(
                port: port, "PUT", "/models/m/n",
                headers: [("Content-Type", "application/json")], text: "5")
            #expect(fine.status == 200)
        }
    }
}
