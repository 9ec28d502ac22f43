import LiveBindEngine
extension AccessPolicy.Token {
    /// Reads a tokens file: a JSON array of entries such as
    /// `{"token": "…", "scopes": ["read", "write"], "models": ["sensor", "lab-"], "name": "ci"}`
    /// (`models` and `name` optional). Throws `ServerError.invalidTokensFile` naming the first bad
    /// entry (counted from 1); messages never contain a token.
    package static func list(json bytes: [UInt8]) throws(ServerError) -> [AccessPolicy.Token] {
        let document: JSON
        do {
            document = try JSON(parsing: bytes)
        } catch {
            throw .invalidTokensFile(entry: nil, name: nil, reason: "not valid JSON: \(error)")
        }
        guard case .array(let entries) = document else {
            throw .invalidTokensFile(entry: nil, name: nil, reason: #"expected a JSON array of {"token", "scopes", "models"} entries"#)
        }
        var tokens: [AccessPolicy.Token] = []
        for (index, entry) in entries.enumerated() {
            let token = try parse(entry, entry: index + 1)
            if let earlier = tokens.firstIndex(where: { $0.secret == token.secret }) {
                throw .invalidTokensFile(
                    entry: index + 1, name: token.name, reason: "the same token as entry \(earlier + 1); each token must be unique")
            }
            tokens.append(token)
        }
        return tokens
    }

    private static func parse(_ entry: JSON, entry number: Int) throws(ServerError) -> AccessPolicy.Token {
        var name: String?
        func fail(_ reason: String) -> ServerError { .invalidTokensFile(entry: number, name: name, reason: reason) }
        guard case .object(let members) = entry else {
            throw fail(#"expected an object such as {"token": "…", "scopes": ["read", "write"]}"#)
        }
        let known: Set<String> = ["token", "scopes", "models", "name"]
        for key in members.keys where !known.contains(key) {
            throw fail("unknown member \"\(key)\"; use \(known.sorted().map { "\"\($0)\"" }.joined(separator: ", "))")
        }
        if let value = members["name"] {
            guard case .string(let text) = value else { throw fail("\"name\" must be a string") }
            name = text
        }
        guard case .string(let secret)? = members["token"] else { throw fail("\"token\" is required: a string") }
        guard case .array(let scopeList)? = members["scopes"] else {
            throw fail(#""scopes" is required: a list of "read" and/or "write""#)
        }
        var scopes: Set<AccessPolicy.Token.Scope> = []
        for value in scopeList {
            guard case .string(let text) = value, let scope = AccessPolicy.Token.Scope(rawValue: text) else {
                throw fail("unknown scope \(value); use \"read\", \"write\" and/or \"audit\"")
            }
            scopes.insert(scope)
        }
        var models: [String]?
        if let value = members["models"], value != .null {
            guard case .array(let list) = value else { throw fail("\"models\" must be a list of model-name prefixes") }
            var prefixes: [String] = []
            for item in list {
                guard case .string(let prefix) = item else { throw fail("\"models\" must hold strings (model-name prefixes)") }
                prefixes.append(prefix)
            }
            models = prefixes
        }
        let token = AccessPolicy.Token(secret, scopes: scopes, models: models, name: name)
        if let reason = AccessPolicy.problem(with: token) { throw fail(reason) }
        return token
    }
}
