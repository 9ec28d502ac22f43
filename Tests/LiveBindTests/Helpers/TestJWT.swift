import Foundation
import JWTKit
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Signs JSON Web Tokens for the tests with jwt-kit: HS256 with a test secret, RS256 with the RSA key
/// pair in Fixtures (made for these tests only), ES256 with a key made per run.
enum TestJWT {
    /// The HS256 secret the server is given (`--jwt-key` file contents).
    static let secret = "livebind-test-hs256-secret-0123456789abcdef"

    /// The claims the tests put in tokens; any may be left out.
    struct Claims: JWTPayload {
        var exp: ExpirationClaim?
        var nbf: NotBeforeClaim?
        var aud: AudienceClaim?
        var iss: IssuerClaim?
        var scope: String?
        var models: [String]?

        func verify(using algorithm: some JWTAlgorithm) async throws {}

        /// A token valid for `seconds` from now with `scope` on `models` (nil: every model).
        static func valid(for seconds: Double = 300, scope: String? = "read write", models: [String]? = nil) -> Claims {
            Claims(exp: .init(value: Date().addingTimeInterval(seconds)), scope: scope, models: models)
        }
    }

    /// Contents of a fixture file.
    static func fixture(_ name: String) throws -> String {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "pem", subdirectory: "Fixtures"))
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// A token signed with HS256 and `secret`.
    static func hs256(_ claims: Claims, secret: String = secret) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    /// A token signed with RS256 and the fixture's private key.
    static func rs256(_ claims: Claims) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: try fixture("jwt-test-rsa-private")), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    /// A token signed with ES256 and `key`, naming `kid` in its header.
    static func es256(_ claims: Claims, key: ES256PrivateKey, kid: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid))
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }

    /// A JWKS holding `key`'s public half under `kid`.
    static func jwks(_ key: ES256PrivateKey, kid: String) throws -> String {
        let parameters = try #require(key.publicKey.parameters)
        return #"{"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","kid":"\#(kid)","x":"\#(parameters.x)","y":"\#(parameters.y)"}]}"#
    }

    /// base64url without padding, for hand-made (hostile) tokens.
    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A server policy that accepts JWTs signed with `key` (file contents), beside the usual static tokens.
    static func policy(
        key: String = secret, audience: String? = nil, issuer: String? = nil,
        privateReads: Bool = true
    ) -> AccessPolicy {
        var policy = TestTokens.policy
        policy.jwt = AccessPolicy.JWT(key: Array(key.utf8), audience: audience, issuer: issuer, leewaySeconds: 0)
        policy.privateReads = privateReads
        return policy
    }
}
