import Testing
import LiveBind
@testable import LiveBindEngine

@Suite("Built-in files") struct BuiltinFilesTests {
    static let files: [String: [UInt8]] = [
        "index.html": Array("<!doctype html><title>built in</title>".utf8),
        "livebind.js": Array("console.log(1)".utf8),
        "examples/index.html": Array("<p>examples</p>".utf8),
        "examples/greenhouse.html": Array("<p>greenhouse</p>".utf8)
    ]

    @Test func servesTheFilesWithTypesAndSecurityHeaders() throws {
        try withRunningServer(configure: { $0.network.builtinFiles = Self.files }) { port in
            let index = try TestHTTPClient.request(port: port, "GET", "/")
            #expect(index.status == 200)
            #expect(index.text == "<!doctype html><title>built in</title>")
            #expect(index.header("Content-Type") == "text/html; charset=utf-8")
            #expect(index.header("Content-Security-Policy")?.contains("default-src 'self'") == true)
            #expect(index.header("X-Frame-Options") == "DENY")
            let script = try TestHTTPClient.request(port: port, "GET", "/livebind.js")
            #expect(script.text == "console.log(1)")
            #expect(script.header("Content-Type")?.hasPrefix("text/javascript") == true)
            #expect(try TestHTTPClient.request(port: port, "GET", "/examples/greenhouse.html").text == "<p>greenhouse</p>")
            #expect(try TestHTTPClient.request(port: port, "GET", "/examples/").text == "<p>examples</p>")
            #expect(try TestHTTPClient.request(port: port, "GET", "/examples").text == "<p>examples</p>")
            #expect(try TestHTTPClient.request(port: port, "HEAD", "/livebind.js").status == 200)
        }
    }

    @Test func anythingElseIsANotFoundProblem() throws {
        try withRunningServer(configure: { $0.network.builtinFiles = Self.files }) { port in
            for target in ["/missing.js", "/examples/../../etc/passwd", "/%2e%2e/index.html", "/index.html/x"] {
                let response = try TestHTTPClient.request(port: port, "GET", target)
                #expect(response.status == 404, "\(target)")
                #expect(response.header("Content-Type") == "application/problem+json", "\(target)")
            }
            let write = try TestHTTPClient.request(port: port, "POST", "/livebind.js", text: "x")
            #expect(write.status == 405)
        }
    }

    @Test func aPublicDirectoryTakesPrecedence() throws {
        try withPublicDirectory { directory in
            try withRunningServer(configure: {
                $0.network.builtinFiles = Self.files
                $0.network.publicDirectory = directory
            }) { port in
                let index = try TestHTTPClient.request(port: port, "GET", "/")
                #expect(index.text == "<!doctype html><title>LiveBind</title>")
                #expect(try TestHTTPClient.request(port: port, "GET", "/livebind.js").status == 404)
            }
        }
    }
}
