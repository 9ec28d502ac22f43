import LiveBind

/// The options of `livebind-server` that are not server settings: what to load and run, and the
/// credentials the access policy is made of. Declared like the settings (``Setting``), so one parser
/// and one `--help` serve both.
struct CommandOptions {
    var settingsFile: String?
    var config: String?
    var demo = false
    /// The flags given on the command line (`--demo` or `--no-demo` among them).
    var given: Set<String> = []
    var tokens: [String] = []
    var tokensFile: String?
    var privateReads = false
    var allowedOrigins: [String] = []
    var jwtKey: String?
    var jwtAudience: String?
    var jwtIssuer: String?
    var jwtLeeway = 30
    var cluster: String?

    static let settings: [Setting<Self>] = [
        Setting(
            SettingsFile.flag, "Options", .optionalText(\.settingsFile, unit: "FILE", absent: "none"),
            #"Read options from a JSON object: {"port": 8080, "private": true, "token": ["…"]}, keys are the flags without dashes (an array repeats one); options after it win."#
        ),
        Setting(
            "config", "Models", .optionalText(\.config, unit: "FILE", absent: "none"),
            "A binding-set file (JSON: models and bindings) to load at start."),
        Setting(
            "demo", "Models", .flag(\.demo),
            "Run the demo models; --no-demo does not (default: the demo runs when no --config is given)."),
        Setting(
            "token", "Access", .list(\.tokens, unit: "TOKEN"),
            "A bearer token with read and write access to every model (repeatable). Writes then need it."),
        Setting(
            "tokens", "Access", .optionalText(\.tokensFile, unit: "FILE", absent: "none"),
            #"A JSON file of tokens: [{"token": "…", "scopes": ["read", "write"], "models": ["lab-"]}]."#),
        Setting(
            "private", "Access", .flag(\.privateReads),
            "Reads (models, /events, /bindings, /metrics) need a token with the read scope too."),
        Setting(
            "allow-origin", "Access", .list(\.allowedOrigins, unit: "ORIGIN"),
            "Another origin whose pages may call the API (CORS) and write, e.g. https://app.example.com (repeatable)."),
        Setting(
            "jwt-key", "Access", .optionalText(\.jwtKey, unit: "FILE", absent: "none"),
            "Accept JWTs verified with this key file: a JWKS (JSON with \"keys\"), an RS256/ES256 public key (PEM), or else an HS256 secret (32+ bytes)."
        ),
        Setting(
            "jwt-audience", "Access", .optionalText(\.jwtAudience, unit: "AUD", absent: "none"),
            "With --jwt-key: the \"aud\" a token must name."),
        Setting(
            "jwt-issuer", "Access", .optionalText(\.jwtIssuer, unit: "ISS", absent: "none"),
            "With --jwt-key: the \"iss\" a token must carry."),
        Setting(
            "jwt-leeway", "Access", .integer(\.jwtLeeway, 0...600, unit: "S"),
            "With --jwt-key: seconds of clock difference allowed for \"exp\" and \"nbf\"."),
        Setting(
            "cluster", "Cluster", .optionalText(\.cluster, unit: "URLS", absent: "none (one process)"),
            "Join a cluster: NATS URLs (nats://host:port, comma-separated) of the JetStream servers holding the shared state; one stream replica per URL, up to 3."
        )
    ]

    /// Throws when options that go together do not.
    func validate() throws(ConfigurationError) {
        if jwtKey == nil && (jwtAudience != nil || jwtIssuer != nil) {
            throw ConfigurationError(flag: jwtAudience != nil ? "jwt-audience" : "jwt-issuer", reason: "needs --jwt-key")
        }
    }

    /// Whether the demo runs: as `--demo`/`--no-demo` said (the last given), else when there is no `--config`.
    var runsDemo: Bool { given.contains("demo") ? demo : config == nil }

    /// The NATS URLs of `--cluster`.
    var clusterServers: [String] {
        (cluster ?? "").split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty }
    }
}
