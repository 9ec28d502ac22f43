import Dispatch
import Foundation
import JWTKit
import LiveBindEngine
internal import LiveBindHTTP

/// Verifies JSON Web Tokens against the key of `--jwt-key` with jwt-kit, and checks their time,
/// audience and issuer claims.
///
/// The key file is told apart by its contents: a JSON object with a `keys` array is a JWKS (RSA or EC
/// keys, each with a `kid`; RS256 or ES256), PEM text (`-----BEGIN PUBLIC KEY-----`, or
/// `-----BEGIN RSA PUBLIC KEY-----`) is an RS256 or ES256 public key, and anything else is an HS256
/// secret: the file's bytes without a trailing line end, at least 32 of them.
///
/// > Important: `verify` is called on libmicrohttpd worker threads. jwt-kit's key collection is an
/// actor whose API is async, so `verify` runs the verification as a task on a `DispatchTaskExecutor`
/// (a serial queue of its own, outside the cooperative pool) and waits for it. The task never needs a
/// thread of the cooperative pool, nor any lock of LiveBind's, and does no I/O, so it always finishes,
/// even when whoever embeds the server blocks the pool; a time limit still bounds the wait.
final class JWTVerifier: Sendable {
    /// The algorithms a token's header may name: the one of the configured key (never `none`, never
    /// a symmetric one for a public key), checked before the signature.
    let algorithms: Set<String>
    let settings: AccessPolicy.JWT
    private let keys: JWTKeyCollection
    private static let executor = DispatchTaskExecutor(label: "livebind.jwt")

    /// Loads the key; throws `ServerError.invalidAccessPolicy` with what is wrong with it.
    init(settings: AccessPolicy.JWT) throws(ServerError) {
        self.settings = settings
        let keys = JWTKeyCollection()
        let text = String(decoding: settings.key, as: UTF8.self)
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            if trimmed.hasPrefix("{") {
                let jwks = try JSONDecoder().decode(JWKS.self, from: Data(trimmed.utf8))
                algorithms = try Self.algorithms(of: jwks)
                _ = try Self.wait { try await keys.add(jwks: jwks) }
            } else if trimmed.hasPrefix("-----BEGIN") {
                if trimmed.contains("PRIVATE KEY-----") {
                    throw ServerError.invalidAccessPolicy("--jwt-key holds a private key: give the public key (openssl pkey -pubout)")
                }
                if let rsa = try? Insecure.RSA.PublicKey(pem: trimmed) {
                    algorithms = ["RS256"]
                    _ = try Self.wait { await keys.add(rsa: rsa, digestAlgorithm: .sha256) }
                } else if let ec = try? ES256PublicKey(pem: trimmed) {
                    algorithms = ["ES256"]
                    _ = try Self.wait { await keys.add(ecdsa: ec) }
                } else {
                    throw ServerError.invalidAccessPolicy("--jwt-key: the PEM is neither an RSA public key nor a P-256 (ES256) public key")
                }
            } else {
                var secret = settings.key
                while let last = secret.last, last == 0x0A || last == 0x0D { secret.removeLast() }
                guard secret.count >= 32 else {
                    throw ServerError.invalidAccessPolicy(
                        "--jwt-key: an HS256 secret must be at least 32 bytes (this one has \(secret.count)); make one with `openssl rand -hex 32`"
                    )
                }
                algorithms = ["HS256"]
                let hmac = HMACKey(from: secret)
                _ = try Self.wait { await keys.add(hmac: hmac, digestAlgorithm: .sha256) }
            }
        } catch let error as ServerError {
            throw error
        } catch {
            throw .invalidAccessPolicy("--jwt-key: not a usable key: \(error)")
        }
        self.keys = keys
    }

    /// The algorithms a JWKS's keys allow; throws for a key LiveBind does not take.
    private static func algorithms(of jwks: JWKS) throws(ServerError) -> Set<String> {
        guard !jwks.keys.isEmpty else { throw .invalidAccessPolicy("--jwt-key: the JWKS has no keys") }
        var algorithms: Set<String> = []
        for (index, key) in jwks.keys.enumerated() {
            guard key.keyIdentifier != nil else {
                throw .invalidAccessPolicy("--jwt-key: JWKS key \(index + 1) has no \"kid\"; tokens pick their key by it")
            }
            let implied = key.keyType == .rsa ? "RS256" : key.keyType == .ecdsa ? "ES256" : nil
            guard let implied else { throw .invalidAccessPolicy("--jwt-key: JWKS key \(index + 1) is neither RSA nor EC") }
            let named = key.algorithm?.rawValue ?? implied
            guard named == implied else {
                throw .invalidAccessPolicy("--jwt-key: JWKS key \(index + 1) names \"\(named)\"; LiveBind takes RS256 and ES256 keys")
            }
            algorithms.insert(named)
        }
        return algorithms
    }

    /// The credential a token carries, or why it is refused. Never mentions the token.
    func verify(_ token: String, now: Date = Date()) throws(AccessError) -> AccessControl.Credential {
        let header: JWTHeader
        do {
            header = try DefaultJWTParser().parse(Array(token.utf8), as: JWTClaims.self).header
        } catch {
            // A token whose claims do not decode (no exp, wrong types) is refused here too.
            throw .rejectedToken("it is not a JSON Web Token LiveBind can read (it needs an \"exp\" claim)")
        }
        guard let algorithm = header.alg, algorithms.contains(algorithm) else {
            throw .rejectedToken(
                "its algorithm \"\(header.alg ?? "none")\" is not the key's (\(algorithms.sorted().joined(separator: ", ")))")
        }
        let keys = keys
        let claims: JWTClaims
        do {
            claims = try Self.wait { try await keys.verify(token, as: JWTClaims.self) }
        } catch {
            throw .rejectedToken("its signature does not verify with the configured key")
        }
        let leeway = TimeInterval(settings.leewaySeconds)
        do {
            try claims.exp.verifyNotExpired(currentDate: now.addingTimeInterval(-leeway))
        } catch {
            throw .rejectedToken("it expired at \(Self.format(claims.exp.value))")
        }
        if let nbf = claims.nbf {
            do { try nbf.verifyNotBefore(currentDate: now.addingTimeInterval(leeway)) } catch {
                throw .rejectedToken("it is not valid before \(Self.format(nbf.value))")
            }
        }
        if let audience = settings.audience {
            guard let aud = claims.aud, aud.value.contains(audience) else {
                throw .rejectedToken("its audience (\"aud\") is not \"\(audience)\"")
            }
        }
        if let issuer = settings.issuer, claims.iss?.value != issuer {
            throw .rejectedToken("its issuer (\"iss\") is not \"\(issuer)\"")
        }
        let words = (claims.scope ?? "").split(separator: " ")
        let scopes = Set(words.compactMap { AccessPolicy.Token.Scope(rawValue: String($0)) })
        // The issuer's length first, so that no other (iss, sub) pair reads the same.
        let subject = claims.sub.map { sub in (claims.iss.map { "\($0.value.utf8.count):\($0.value) " } ?? "") + sub.value }
        return AccessControl.Credential(
            scopes: scopes, prefixes: claims.models,
            expiresAt: claims.exp.value.addingTimeInterval(leeway), rateKey: nil,
            subject: subject, actor: "jwt:" + (claims.sub?.value ?? ""))
    }

    private static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// Runs `work` as a task and waits for it on this (non-cooperative) thread; see the type's note.
    private static func wait<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) throws -> Value {
        guard let result = executor.wait(timeout: .seconds(10), work) else {
            throw AccessError.rejectedToken("its verification took longer than 10 s")
        }
        return try result.get()
    }
}
