import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindHTTP
@testable import LiveBindEngine

@Suite("Access control: Origin check, CORS, security headers") struct OriginAndCORSTests {
    private func seeded() throws -> Store {
        let store = Store()
        try store.put("lab-1", ["t": 1])
        return store
    }

    @Test func aWriteFromAnotherOriginIs403EvenWithoutTokens() throws {
        let store = try seeded()
        try withRunningServer(store: store) { port in
            // A form post is a "simple" cross-site request: no preflight protects it, the Origin check does.
            let form = try TestHTTPClient.send(
                port: port, "POST", "/models/lab-1", "t=66", type: "application/x-www-form-urlencoded",
                headers: [("Origin", "http://evil.example")])
            #expect(form.isProblem(403))
            #expect(
                try form.object()["detail"] as? String
                    == "write refused from origin http://evil.example: not this server's origin; start the server with --allow-origin http://evil.example to allow it"
            )
            for origin in ["null", "http://127.0.0.1:\(port + 1)", "https://127.0.0.1.evil.example:\(port)", "garbage"] {
                let response = try TestHTTPClient.send(port: port, "PUT", "/models/lab-1/t", "66", headers: [("Origin", origin)])
                #expect(response.isProblem(403), "\(origin)")
            }
            let crossSite = try TestHTTPClient.send(port: port, "PUT", "/models/lab-1/t", "66", headers: [("Sec-Fetch-Site", "cross-site")])
            #expect(crossSite.isProblem(403))
            let binding = try TestHTTPClient.send(
                port: port, "POST", "/bindings", #"{"source":"lab-1.t","target":"lab-1.u"}"#,
                headers: [("Origin", "http://evil.example")])
            #expect(binding.isProblem(403))
            #expect(try store.snapshot("lab-1").revision == 1)
            #expect(
                try TestHTTPClient.request(port: port, "GET", "/models/lab-1", headers: [("Origin", "http://evil.example")]).status == 200,
                "reads are not writes")
        }
    }

    @Test func theServersOwnOriginAndCurlMayWrite() throws {
        let store = try seeded()
        try withRunningServer(store: store) { (port: Int) throws -> Void in
            let own = [("Origin", "http://127.0.0.1:\(port)"), ("Sec-Fetch-Site", "same-origin")]
            #expect(try TestHTTPClient.send(port: port, "PUT", "/models/lab-1/t", "2", headers: own).status == 200)
            #expect(try TestHTTPClient.send(port: port, "PUT", "/models/lab-1/t", "4").status == 200, "no Origin: curl")
            #expect(try store.value(of: "lab-1", at: Path(dotted: "t")) == 4)
        }
    }

    @Test func anAllowedOriginMayWriteWithItsToken() throws {
        let store = try seeded()
        var policy = TestTokens.policy
        policy.allowedOrigins = ["https://app.example.com"]
        try withRunningServer(store: store, configure: { $0.access.policy = policy }) { port in
            let headers = [("Origin", "https://app.example.com")] + TestTokens.bearer(TestTokens.lab)
            let response = try TestHTTPClient.send(port: port, "PUT", "/models/lab-1/t", "5", headers: headers)
            #expect(response.status == 200)
            #expect(response.header("Access-Control-Allow-Origin") == "https://app.example.com")
            #expect(response.header("Vary") == "Origin")
            #expect(response.header("Access-Control-Expose-Headers")?.contains("LiveBind-Event-ID") == true)
            #expect(
                response.header("Access-Control-Expose-Headers")?.contains("LiveBind-Node") == true,
                "a cross-origin page of a cluster can name the node that served it")
            let unauthorized = try TestHTTPClient.send(
                port: port, "PUT", "/models/lab-1/t", "6", headers: [("Origin", "https://app.example.com")])
            #expect(unauthorized.isProblem(401))
            #expect(unauthorized.header("Access-Control-Allow-Origin") == "https://app.example.com", "the page can read why")
            let other = try TestHTTPClient.send(
                port: port, "PUT", "/models/lab-1/t", "7",
                headers: [("Origin", "https://evil.example.com")] + TestTokens.bearer(TestTokens.lab))
            #expect(other.isProblem(403))
            #expect(other.header("Access-Control-Allow-Origin") == nil)
            #expect(try store.value(of: "lab-1", at: Path(dotted: "t")) == 5)
        }
    }

    @Test func noCORSByDefault() throws {
        try withRunningServer(store: try seeded()) { port in
            let origin = [("Origin", "https://app.example.com")]
            let read = try TestHTTPClient.request(port: port, "GET", "/models/lab-1", headers: origin)
            #expect(read.status == 200)
            #expect(!read.headers.contains { $0.name.lowercased().hasPrefix("access-control-") })
            let preflight = try TestHTTPClient.request(
                port: port, "OPTIONS", "/models/lab-1",
                headers: origin + [("Access-Control-Request-Method", "PUT")])
            #expect(preflight.status == 405)
            #expect(!preflight.headers.contains { $0.name.lowercased().hasPrefix("access-control-") })
        }
    }

    @Test func preflightFromAnAllowedOriginIsAnswered() throws {
        var policy = AccessPolicy()
        policy.allowedOrigins = ["https://app.example.com", "http://localhost:3000"]
        try withRunningServer(store: try seeded(), configure: { $0.access.policy = policy }) { port in
            let request: [(String, String)] = [
                ("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "PATCH"),
                ("Access-Control-Request-Headers", "authorization, content-type")
            ]
            let preflight = try TestHTTPClient.request(port: port, "OPTIONS", "/models/lab-1", headers: request)
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "http://localhost:3000")
            #expect(preflight.header("Access-Control-Allow-Methods") == "GET, HEAD, PUT, POST, PATCH, DELETE")
            #expect(
                preflight.header("Access-Control-Allow-Headers")
                    == "Authorization, Content-Type, If-Match, Last-Event-ID, If-None-Match, Idempotency-Key, Presence-Key")
            #expect(preflight.header("Vary") == "Origin")
            let refused = try TestHTTPClient.request(
                port: port, "OPTIONS", "/models/lab-1",
                headers: [("Origin", "http://localhost:3001"), ("Access-Control-Request-Method", "PUT")])
            #expect(refused.header("Access-Control-Allow-Origin") == nil)
            let stream = try TestEventStream(port: port, target: "/events", headers: [("Origin", "https://app.example.com")])
            #expect(stream.headers.contains { $0.name == "Access-Control-Allow-Origin" && $0.value == "https://app.example.com" })
        }
    }

    @Test func securityHeadersOnStaticFilesAndNosniffOnTheAPI() throws {
        try withPublicDirectory { directory in
            try withRunningServer(store: try seeded(), configure: { $0.network.publicDirectory = directory }) { port in
                let index = try TestHTTPClient.request(port: port, "GET", "/")
                #expect(index.header("X-Content-Type-Options") == "nosniff")
                let policy = try #require(index.header("Content-Security-Policy"))
                for directive in ["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'"] {
                    #expect(policy.contains(directive))
                }
                #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
                #expect(index.header("Referrer-Policy") == "no-referrer")
                for target in ["/models/lab-1", "/models/nope", "/healthz", "/metrics"] {
                    #expect(
                        try TestHTTPClient.request(port: port, "GET", target).header("X-Content-Type-Options") == "nosniff", "\(target)")
                }
                let tooLarge = try TestHTTPClient.request(port: port, "PUT", "/models/x", headers: [("Content-Length", "999999999")])
                #expect(tooLarge.header("X-Content-Type-Options") == "nosniff")
            }
        }
    }

    @Test(arguments: ["default-src 'self'; style-src 'self' 'unsafe-inline'", ""])
    func aPublicFolderCarriesThePolicyItIsGivenAndTheBuiltinFilesKeepTheirs(policy: String) throws {
        #expect(throws: ServerError.self) { try StaticFiles(directory: "/tmp", contentSecurityPolicy: "a\r\nSet-Cookie: x=1") }
        try withPublicDirectory { directory in
            try withRunningServer(configure: {
                $0.network.publicDirectory = directory
                $0.network.contentSecurityPolicy = policy
            }) { port in
                let index = try TestHTTPClient.request(port: port, "GET", "/")
                #expect(index.status == 200)
                #expect(index.header("Content-Security-Policy") == (policy.isEmpty ? nil : policy))
                #expect(index.header("X-Content-Type-Options") == "nosniff")
            }
        }
        try withRunningServer(configure: {
            $0.network.builtinFiles = ["index.html": Array("<!doctype html>".utf8)]
            $0.network.contentSecurityPolicy = policy
        }) { port in
            let index = try TestHTTPClient.request(port: port, "GET", "/")
            #expect(index.header("Content-Security-Policy") == StaticFiles.defaultContentSecurityPolicy)
        }
    }
}

@Suite("Access control: DNS-rebinding guard") struct HostCheckTests {
    private func check(_ host: String, listeningOn address: String = "127.0.0.1", allowing origins: [String] = []) -> Bool {
        var policy = AccessPolicy()
        policy.allowedOrigins = origins
        let access = AccessControl(policy: policy, listeningOn: address)
        return (try? access.checkHost(HTTPRequest(method: .get, path: "/models", headers: ["Host": host]))) != nil
    }

    @Test func aLoopbackServerAnswersOnlyLoopbackNames() {
        for host in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST", "app.localhost:8080", "[::1]:8080", "127.1.2.3"] {
            #expect(check(host), "\(host)")
        }
        for host in ["evil.example:8080", "127.0.0.1.evil.example", "10.0.0.2:8080", "[::2]:8080", "", "a b"] {
            #expect(!check(host), "\(host)")
        }
        #expect(check("live.example.com", allowing: ["https://live.example.com"]), "an allowed origin's host")
        #expect(check("evil.example:8080", listeningOn: "0.0.0.0"), "a server on every interface cannot know its names")
        #expect(!check("evil.example", listeningOn: "::1"))
    }

    @Test func aRebindingRequestIs403AndChangesNothing() throws {
        let store = Store()
        try store.put("a", ["t": 1])
        try withRunningServer(store: store) { port in
            let socket = try TestSocket(port: port)
            try socket.send(
                "PUT /models/a/t HTTP/1.1\r\nHost: evil.example:\(port)\r\nOrigin: http://evil.example:\(port)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 1\r\nConnection: close\r\n\r\n2")
            let response = try TestHTTPClient.readResponse(from: socket, method: "PUT")
            #expect(response.isProblem(403))
            #expect(try store.value(of: "a", at: Path(dotted: "t")) == 1)
        }
    }
}
