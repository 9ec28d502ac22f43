import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// What each connection's small memory pool still allows: big request headers, HTTP/1.0 streams, bodies.
@Suite("Connection memory") struct ConnectionMemoryTests {
    static let cookie = String(repeating: "c", count: 6 * 1024)

    @Test func aRequestWithASixKilobyteCookieIsAnswered() throws {
        let store = Store()
        try store.put("m", ["v": 1])
        try withRunningServer(store: store) { port in
            let health = try TestHTTPClient.request(port: port, "GET", "/healthz", headers: [("Cookie", "big=\(Self.cookie)")])
            #expect(health.status == 200)
            let model = try TestHTTPClient.request(port: port, "GET", "/models/m", headers: [("Cookie", "big=\(Self.cookie)")])
            #expect(model.status == 200)
            #expect(try model.object()["v"] as? Int == 1)
        }
    }

    @Test func anEventStreamWithASixKilobyteCookieGetsItsEvents() throws {
        let store = Store()
        try store.put("m", ["v": ""])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port, headers: [("Cookie", "big=\(Self.cookie)")])
            #expect(stream.status == 200)
            #expect(try stream.next()?.type == "snapshot")
            // Events larger than what is left of the pool still arrive whole, in pieces.
            let large = String(repeating: "x", count: 40 * 1024)
            for index in 0..<3 { try store.set(.string("\(index)\(large)"), at: Path(pointer: "/v"), in: "m") }
            for index in 0..<3 {
                let event = try #require(try stream.next())
                #expect(event.type == "set")
                #expect(try event.object()["value"] as? String == "\(index)\(large)")
            }
        }
    }

    @Test func requestHeadersLargerThanThePoolGetAClearRefusal() throws {
        try withRunningServer { port in
            let huge = String(repeating: "h", count: 64 * 1024)
            let socket = try TestSocket(port: port)
            try socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: big=\(huge)\r\n\r\n")
            let (status, _) = try TestHTTPClient.readHead(from: socket)
            #expect(status == 431)
            let health = try TestHTTPClient.request(port: port, "GET", "/healthz")
            #expect(health.status == 200)
        }
    }

    @Test func aPostBodyMuchLargerThanThePoolStreamsIn() throws {
        let store = Store()
        try withRunningServer(store: store) { port in
            let text = String(repeating: "y", count: 200 * 1024)
            let put = try TestHTTPClient.request(
                port: port, "PUT", "/models/big", headers: [("Content-Type", "application/json")],
                text: "{\"text\":\"\(text)\"}")
            #expect((200..<300).contains(put.status))
            let read = try TestHTTPClient.request(port: port, "GET", "/models/big")
            #expect(try read.object()["text"] as? String == text)
        }
    }

    @Test func anHTTP10ClientGetsAnUnchunkedEventStream() throws {
        let store = Store()
        try store.put("m", ["v": 0])
        try withRunningServer(store: store) { port in
            let socket = try TestSocket(port: port)
            try socket.send("GET /events HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n")
            let (status, headers) = try TestHTTPClient.readHead(from: socket)
            #expect(status == 200)
            #expect(!headers.contains { $0.name.lowercased() == "transfer-encoding" })
            /// Reads lines (`readLine` throws if the stream ends first) up to the one that is `text`.
            func skipLines(through text: String) throws {
                while try socket.readLine() != text {}
            }
            try skipLines(through: "event: snapshot")
            let value = String(repeating: "z", count: 10_000)  // more than one 4 kB block
            try store.set(.string(value), at: Path(pointer: "/v"), in: "m")
            try skipLines(through: "event: set")
            let data = try socket.readLine()
            #expect(data.hasPrefix("data: "))
            #expect(data.contains("\(value)\""))
        }
    }
}
