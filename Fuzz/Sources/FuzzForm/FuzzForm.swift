import FuzzDriver
import Glibc
import LiveBind

/// libFuzzer entry point: the input is an `application/x-www-form-urlencoded` body, POSTed over loopback
/// to a real server (started once), the way `curl -d` sends it. The server answers 200 or a 4xx, never
/// a 5xx and never a dropped connection, and a refused form leaves the model exactly as it was.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzForm(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let fixture = FormFixture.shared
    fixture.reset()
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let before = try? fixture.store.snapshot("doc")
    let status = fixture.post(body)
    if !(200..<500).contains(status) { fail("form answered \(status)") }
    if status != 200 {
        let after = try? fixture.store.snapshot("doc")
        if after?.value != before?.value || after?.revision != before?.revision {
            fail("a refused form (\(status)) changed the model")
        }
    }
    return 0
}

/// The server under test, and a minimal keep-alive HTTP/1.1 client for it (one connection for all inputs:
/// opening one per input outruns the server's cleanup of closed connections under the sanitizers).
final class FormFixture: @unchecked Sendable {  // libFuzzer calls the target from one thread only
    static let shared = FormFixture()
    let store = Store()
    let server: LiveBindServer
    let port: UInt16
    private var connection: Int32 = -1

    private init() {
        var configuration = LiveBindServer.Configuration()
        configuration.network.port = 0
        server = LiveBindServer(store: store, configuration: configuration)
        do { try server.start() } catch { fatalError("server did not start: \(error)") }
        port = UInt16(server.port)
        reset()
    }

    /// Puts the seed document back, so inputs do not grow the model without end.
    func reset() {
        do {
            try store.put("doc", ["temperature": 20.5, "name": "probe", "readings": [1, 2, 3], "meta": ["unit": "C"]])
        } catch {
            fail("seed document refused: \(error)")
        }
    }

    /// POSTs `body` to /models/doc and returns the status (0: no answer, even on a fresh connection).
    func post(_ body: [UInt8]) -> Int {
        let head =
            "POST /models/doc HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.count)\r\n\r\n"
        let request = Array(head.utf8) + body
        if connection >= 0, let status = exchange(request) { return status }
        // The server may close a kept-alive connection before reading this request: send it again once.
        reconnect()
        return exchange(request) ?? 0
    }

    private func reconnect() {
        if connection >= 0 { close(connection) }
        connection = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if connection < 0 { fail("socket failed, errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(connection, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 && errno != EINTR { fail("connect failed, errno \(errno)") }
    }

    /// Sends one request and reads its whole answer; nil when the connection closed first.
    private func exchange(_ request: [UInt8]) -> Int? {
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }  // libFuzzer's timeout timer (SIGALRM) interrupts calls
            if count <= 0 { return nil }
            sent += count
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func readMore() -> Bool {
            var count = 0
            repeat {
                count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            } while count < 0 && errno == EINTR
            if count <= 0 { return false }
            response += buffer[0..<count]
            return true
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            guard readMore() else { return nil }
            headEnd = response.indices.dropLast(3).first { Array(response[$0..<($0 + 4)]) == separator }
        }
        let head = String(decoding: response[..<headEnd!], as: UTF8.self)
        guard let status = Int(head.dropFirst(9).prefix(3)) else { return nil }
        let length =
            head.split(separator: "\r\n").lazy
            .compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                return Int(parts[1].trimmingPrefix(" "))
            }.first ?? 0
        while response.count < headEnd! + 4 + length {
            guard readMore() else { return nil }
        }
        if head.lowercased().contains("connection: close") { close(connection); connection = -1 }
        return status
    }
}

/// Process entry: SwiftPM names an executable's entry `FuzzForm_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzForm_main")
public func fuzzFormMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzForm)
}
