import FuzzDriver
import Glibc
import LiveBind

/// libFuzzer entry point: the input is an `application/x-www-form-urlencoded` body, POSTed over loopback
/// to a real server (started once), the way `curl -d` sends it. The server answers 200 or a 4xx, never
/// a 5xx and never a dropped connection, and a refused form leaves the model exactly as it was.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzForm(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let fixture = FormFixture.shared
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

/// Reports on stderr (release builds drop `precondition` messages) and aborts, which libFuzzer records.
func fail(_ message: String) -> Never {
    let line = Array("FuzzForm: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    abort()
}

/// The server under test, and a minimal HTTP/1.1 client for it.
final class FormFixture: Sendable {
    static let shared = FormFixture()
    let store = Store()
    let server: LiveBindServer
    let port: UInt16

    private init() {
        do {
            try store.put("doc", ["temperature": 20.5, "name": "probe", "readings": [1, 2, 3], "meta": ["unit": "C"]])
        } catch {
            fatalError("seed document refused: \(error)")
        }
        var configuration = LiveBindServer.Configuration()
        configuration.port = 0
        server = LiveBindServer(store: store, configuration: configuration)
        do { try server.start() } catch { fatalError("server did not start: \(error)") }
        port = UInt16(server.port)
    }

    /// POSTs `body` to /models/doc and returns the status (0: no answer).
    func post(_ body: [UInt8]) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0, "socket failed")
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        precondition(connected == 0, "connect failed")
        let head = "POST /models/doc HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.count)\r\n\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { return 0 }
            sent += count
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while response.count < 12 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        // "HTTP/1.1 200 ..." → 200
        guard response.count >= 12, let status = Int(String(decoding: response[9..<12], as: UTF8.self)) else { return 0 }
        return status
    }
}

/// Process entry: SwiftPM names an executable's entry `FuzzForm_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzForm_main")
public func fuzzFormMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzForm)
}
