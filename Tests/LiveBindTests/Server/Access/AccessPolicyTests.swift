import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindHTTP
@testable import LiveBindEngine

@Suite("Access policy: tokens files, token comparison, origins") struct AccessPolicyTests {
    @Test func readsATokensFile() throws {
        let text = #"""
            [{"token": "a-1234567890", "scopes": ["read", "write"]},
             {"token": "b-1234567890", "scopes": ["write"], "models": ["sensor", "lab-"], "name": "lab"}]
            """#
        let tokens = try AccessPolicy.Token.list(json: Array(text.utf8))
        #expect(tokens.count == 2)
        #expect(tokens[0].scopes == [.read, .write] && tokens[0].models == nil)
        #expect(tokens[1].scopes == [.write] && tokens[1].models == ["sensor", "lab-"] && tokens[1].name == "lab")
        #expect(tokens[1].covers(model: "lab-3") && tokens[1].covers(model: "sensor") && !tokens[1].covers(model: "other"))
    }

    @Test(arguments: [
        (#"{"token": "a"}"#, "tokens file: expected a JSON array"),
        (#"[{"token": "a"#, "tokens file: not valid JSON"),
        (#"[{"token": "a-1", "scopes": ["read"]}, {"scopes": ["read"]}]"#, #"tokens file entry 2: "token" is required"#),
        (#"[{"token": "a-1", "scopes": ["admin"], "name": "ci"}]"#, #"tokens file entry 1 ("ci"): unknown scope "admin""#),
        (#"[{"token": "a-1", "scopes": []}]"#, "tokens file entry 1: no scopes"),
        (#"[{"token": "a-1"}]"#, #"tokens file entry 1: "scopes" is required"#),
        (#"[{"token": "", "scopes": ["read"]}]"#, "tokens file entry 1: the token is empty"),
        (#"[{"token": "a b", "scopes": ["read"]}]"#, "tokens file entry 1: a token may hold only visible ASCII"),
        (#"[{"token": "a-1", "scopes": ["read"], "models": "lab"}]"#, #"tokens file entry 1: "models" must be a list"#),
        (#"[{"token": "a-1", "scopes": ["read"], "models": [""]}]"#, "tokens file entry 1: an empty model prefix"),
        (#"[{"token": "a-1", "scopes": ["read"], "models": []}]"#, "tokens file entry 1: an empty model prefix or list"),
        (#"[{"token": "a-1", "scopes": ["read"], "model": ["x"]}]"#, #"tokens file entry 1: unknown member "model""#),
        (
            #"[{"token": "a-1", "scopes": ["read"]}, {"token": "a-1", "scopes": ["write"]}]"#,
            "tokens file entry 2: the same token as entry 1"
        ),
        (#"["a-1"]"#, "tokens file entry 1: expected an object")
    ])
    func rejectsABadTokensFileNamingTheEntry(_ text: String, _ message: String) {
        do {
            _ = try AccessPolicy.Token.list(json: Array(text.utf8))
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.hasPrefix(message), "\(error.description)")
            #expect(!error.description.contains("a-1"), "a message shows a token")
        }
    }

    @Test func comparesTokensWithoutShortcuts() {
        let secret = Array("abcdef".utf8)
        #expect(AccessControl.constantTimeEqual(secret, secret, over: 16))
        #expect(!AccessControl.constantTimeEqual(Array("abcdeg".utf8), secret, over: 16))
        #expect(!AccessControl.constantTimeEqual(Array("abcde".utf8), secret, over: 16))
        #expect(!AccessControl.constantTimeEqual(Array("abcdef\0".utf8), secret, over: 16), "padding is not equality")
        #expect(!AccessControl.constantTimeEqual([], secret, over: 16))
        var policy = AccessPolicy()
        policy.tokens = [.init("first-token"), .init("second-token", scopes: [.read])]
        let access = AccessControl(policy: policy)
        #expect(access.match("second-token")?.scopes == [.read])
        #expect(access.match("first-token")?.scopes == [.read, .write])
        #expect(access.match("third-token") == nil)
        #expect(access.match("") == nil)
    }

    @Test func theServersOwnOriginFollowsTheHostHeader() throws {
        let access = AccessControl(policy: AccessPolicy())
        func check(_ origin: String, host: String) -> Bool {
            (try? access.checkOrigin(HTTPRequest(method: .put, path: "/models/a", headers: ["Host": host, "Origin": origin]))) != nil
        }
        #expect(check("http://127.0.0.1:8080", host: "127.0.0.1:8080"))
        #expect(check("https://live.example.com", host: "live.example.com"), "behind a TLS proxy")
        #expect(check("https://live.example.com:443", host: "live.example.com"))
        #expect(check("http://LIVE.example.com", host: "live.example.com:80"))
        #expect(check("http://[::1]:8080", host: "[::1]:8080"))
        #expect(!check("http://127.0.0.1:8081", host: "127.0.0.1:8080"))
        #expect(!check("http://live.example.com.evil.io", host: "live.example.com"))
        #expect(!check("http://live.example.com/path", host: "live.example.com"))
        #expect(!check("file://", host: "live.example.com"))
        #expect(!check("null", host: "live.example.com"))
    }

    @Test func redactsTokensFromForeignLogText() {
        #expect(
            AccessControl.redactingTokens("GET `/events?model=a&access_token=s3cret&x=1' failed")
                == "GET `/events?model=a&access_token=…&x=1' failed")
        #expect(AccessControl.redactingTokens("Authorization: Bearer s3cret") == "Authorization: Bearer …")
        #expect(AccessControl.redactingTokens("nothing here") == "nothing here")
    }

    @Test func printingAPolicyHidesTheSecrets() {
        var configuration = LiveBindServer.Configuration()
        configuration.access.policy.tokens = [
            .init("super-secret-1", name: "ops"), .init("super-secret-2", scopes: [.read], models: ["lab-"])
        ]
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [dumped, "\(configuration)", String(reflecting: configuration), "\(configuration.access.policy.tokens)"] {
            #expect(!text.contains("super-secret"), "\(text)")
        }
        #expect("\(configuration.access.policy.tokens[1])" == "Token(unnamed: read; models lab-)")
    }
}
