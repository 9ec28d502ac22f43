import LiveBindEngine
extension AccessPolicy {
    /// JSON Web Tokens the server accepts beside its static tokens (`--jwt-key`).
    ///
    /// A token's `scope` claim (`"read write"`) gives its scopes and its `models` claim (`["lab-"]`)
    /// its model prefixes; `exp` is required, `nbf`, `aud` and `iss` are checked when present or
    /// configured. Times are allowed `leewaySeconds` of clock difference either way.
    public struct JWT: Sendable {
        /// The key file's contents: a JWKS (JSON with `keys`), an RS256/ES256 public key in PEM, or
        /// else an HS256 secret of at least 32 bytes (a trailing line end is not part of it).
        public var key: [UInt8]
        /// The `aud` a token must name; nil accepts any audience.
        public var audience: String?
        /// The `iss` a token must carry; nil accepts any issuer.
        public var issuer: String?
        /// Seconds of clock difference allowed when checking `exp` and `nbf`.
        public var leewaySeconds: Int = 30

        /// Tokens verified with `key`.
        public init(key: [UInt8], audience: String? = nil, issuer: String? = nil, leewaySeconds: Int = 30) {
            self.key = key
            self.audience = audience
            self.issuer = issuer
            self.leewaySeconds = leewaySeconds
        }
    }
}

extension AccessPolicy.JWT: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The settings without the key, so printing a configuration never shows a secret.
    public var description: String {
        "JWT(audience: \(audience ?? "any"), issuer: \(issuer ?? "any"), leeway: \(leewaySeconds) s)"
    }

    /// The same as `description`: the key stays hidden.
    public var debugDescription: String { description }

    /// A mirror without the key.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["audience": audience as Any, "issuer": issuer as Any, "leewaySeconds": leewaySeconds],
            displayStyle: .struct)
    }
}
