import LiveBind

/// `--token`, `--tokens FILE`, `--private` and `--allow-origin` as an access policy, checked before start.
enum TokensFile {
    /// The policy the flags describe; throws a message naming the bad flag or tokens-file entry.
    static func policy(
        tokens: [String], file: String?, privateReads: Bool,
        allowedOrigins: [String]
    ) throws -> AccessPolicy {
        var policy = AccessPolicy()
        for (index, secret) in tokens.enumerated() {
            var token = AccessPolicy.Token(secret)
            token.name = "--token \(index + 1)"
            policy.tokens.append(token)
        }
        if let file {
            guard let bytes = ConfigFile.readAll(file) else { throw ConfigFile.Failure(description: "cannot read --tokens file '\(file)'") }
            do {
                policy.tokens += try AccessPolicy.Token.list(json: bytes)
            } catch {
                throw ConfigFile.Failure(description: "--tokens '\(file)': \(error)")
            }
        }
        policy.privateReads = privateReads
        policy.allowedOrigins = allowedOrigins
        return policy
    }
}
