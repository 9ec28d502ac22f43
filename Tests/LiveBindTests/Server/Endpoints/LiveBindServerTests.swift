import Testing
import LiveBind
@testable import LiveBindEngine

@Suite("Server skeleton") struct LiveBindServerTests {
    @Test func healthzAnswersOKWithTheVersion() throws {
        try withRunningServer { port in
            let response = try TestHTTPClient.request(port: port, "GET", "/healthz")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.text == #"{"status":"ok","version":"\#(LiveBindVersion.string)"}"#)
        }
    }

    @Test func everyAnswerNamesTheServerAndItsVersion() throws {
        try withRunningServer { port in
            let found = try TestHTTPClient.request(port: port, "GET", "/healthz")
            let missing = try TestHTTPClient.request(port: port, "GET", "/models/nothing-here")
            #expect(missing.status == 404)
            for response in [found, missing] {
                #expect(response.header("Server") == "LiveBind/\(LiveBindVersion.string)")
            }
        }
    }

    @Test func servesIndexAndFilesWithTypesAndSecurityHeaders() throws {
        try withPublicDirectory { directory in
            try withRunningServer(configure: { $0.network.publicDirectory = directory }) { port in
                let index = try TestHTTPClient.request(port: port, "GET", "/")
                #expect(index.status == 200)
                #expect(index.header("Content-Type") == "text/html; charset=utf-8")
                #expect(index.text.contains("<title>LiveBind</title>"))
                #expect(index.header("X-Content-Type-Options") == "nosniff")
                #expect(index.header("Content-Security-Policy")?.contains("default-src 'self'") == true)
                let script = try TestHTTPClient.request(port: port, "GET", "/app.js")
                #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
                let style = try TestHTTPClient.request(port: port, "GET", "/style.css")
                #expect(style.header("Content-Type") == "text/css; charset=utf-8")
                #expect(style.text == "body{}")
            }
        }
    }

    @Test(arguments: [
        "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/escape.txt",
        "/..%2fsecret.txt", "/missing.html", "/./../secret.txt"
    ])
    func refusesPathsOutsideThePublicDirectory(_ target: String) throws {
        try withPublicDirectory { directory in
            try withRunningServer(configure: { $0.network.publicDirectory = directory }) { port in
                let response = try TestHTTPClient.request(port: port, "GET", target)
                #expect(response.status == 404)
                #expect(response.text != "secret")
                #expect(response.header("Content-Type") == "application/problem+json")
            }
        }
    }

    @Test func wrongMethodOnAKnownPathIs405WithAllow() throws {
        try withRunningServer { port in
            let response = try TestHTTPClient.request(port: port, "POST", "/healthz", text: "{}")
            #expect(response.status == 405)
            #expect(response.header("Allow") == "GET, HEAD")
            let problem = try response.object()
            #expect(problem["status"] as? Int == 405)
            #expect(problem["title"] as? String == "Method Not Allowed")
        }
    }

    @Test func stopsAndFreesThePort() throws {
        let server = LiveBindServer(
            store: Store(),
            configuration: {
                var configuration = LiveBindServer.Configuration()
                configuration.network.port = 0
                return configuration
            }())
        try server.start()
        let port = server.port
        #expect(port > 0)
        server.stop()
        #expect(server.port == 0)
        #expect(throws: (any Error).self) { try TestHTTPClient.request(port: port, "GET", "/healthz") }
        server.stop()
    }
}
