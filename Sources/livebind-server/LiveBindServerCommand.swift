import ArgumentParser
import Dispatch
import LiveBind
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `livebind-server`: serves models over HTTP with live updates as Server-Sent Events.
@main
struct LiveBindServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livebind-server",
        abstract: "Serve live JSON models over HTTP, with changes streamed as Server-Sent Events.",
        discussion: "Without --config the built-in demo runs (models that change every second). See docs/HTTP.md.",
        version: LiveBindVersion.string)

    @Option(help: "Address to listen on (numeric IPv4/IPv6, or localhost).")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8080

    @Option(help: "Folder served at / instead of the built-in dashboard, examples and openapi.json (for development: edits show without a rebuild).")
    var `public`: String?

    @Option(help: "A binding-set file (JSON: models and bindings) to load at start.")
    var config: String?

    @Flag(inversion: .prefixedNo, help: "Run the demo models (default: on when no --config is given).")
    var demo: Bool?

    @Option(help: "Most event streams open at once; more get 503.")
    var maxStreams = 10_000

    @Option(help: "Most event streams one client address may hold (the forwarded one with --trust-proxy; loopback not counted); more get 503. 0: no cap.")
    var maxStreamsPerAddress = 64

    @Option(help: "Most connections from one TCP peer address; past it a new one is closed at once. 0: no cap. Default: 128, or none when --host is loopback or with --trust-proxy (peers shared by many clients).")
    var maxConnectionsPerAddress: Int?

    @Option(help: "Seconds between heartbeat comments on event streams.")
    var heartbeat = 15.0

    @Option(help: "Largest request body in bytes (413 past it).")
    var bodyLimit = 1 << 20

    @Option(help: "Writes a second per client (bearer token, or address without one) after --write-burst; 429 past it. 0: no limit.")
    var writeRate = 0.0

    @Option(help: "Writes a client may make at once before --write-rate applies (0: the rate, rounded up).")
    var writeBurst = 0

    @Option(help: "Most clients whose write rate is tracked at once (those idle longest are forgotten first).")
    var writeRateClients = 10_000

    @Option(help: "Deepest nesting of a stored model (the root object is level 1; at most 500).")
    var maxDepth = StoreLimits().maxDepth

    @Option(help: "Largest model in bytes of compact JSON (413 past it).")
    var maxModelSize = StoreLimits().maxModelBytes

    @Option(help: "Largest total of all models in bytes of compact JSON (413 past it).")
    var maxStoreSize = StoreLimits().maxStoreBytes

    @Option(help: "Most operations in one JSON Patch (422 past it).")
    var maxPatchOperations = StoreLimits().maxPatchOperations

    @Option(help: "Most bindings at once (definition file and POST /bindings together; 422 past it).")
    var maxBindings = 10_000

    @Option(help: "Most recent events kept for Last-Event-ID resumes (and in the data directory).")
    var retainedEvents = 4096

    @Option(help: "Most bytes of recent events kept for resumes, shared by every stream (the newest event is always kept).")
    var retainedBytes = 64 << 20

    @Option(help: "Most bytes of snapshots and events a stream may hold unsent while its client reads nothing; past it the stream is closed.")
    var streamBufferLimit = 1 << 20

    @Option(help: "Most bytes of snapshots and events all streams together may hold unsent (each shared frame counted once); past it streams whose clients read nothing are closed, fattest first, and new streams get 503.")
    var maxUnsentBytes = 256 << 20

    @Option(help: "Most sub values (locations and windows) on one event stream (422 past it).")
    var maxSubscriptions = 64

    @Option(help: "Most rows in one window of an event stream (sub=…;first=N, last=N, limit=N; 422 past it).")
    var maxWindow = 10_000

    @Option(help: "Seconds without progress before a connection is closed (a client that stopped reading or sending).")
    var connectionTimeout = 60

    @Option(help: "Seconds a client may take to send a whole request, headers and body (slowloris guard).")
    var requestTimeout = 30.0

    @Option(name: .customLong("token"), help: ArgumentHelp(
        "A bearer token with read and write access to every model (repeatable). Writes then need it.",
        valueName: "token"))
    var tokens: [String] = []

    @Option(name: .customLong("tokens"), help: ArgumentHelp(
        #"A JSON file of tokens: [{"token": "…", "scopes": ["read", "write"], "models": ["lab-"]}]."#,
        valueName: "file"))
    var tokensFile: String?

    @Option(name: .customLong("jwt-key"), help: ArgumentHelp(
        "Accept JWTs verified with this key file: a JWKS (JSON with \"keys\"), an RS256/ES256 public key (PEM), or else an HS256 secret (32+ bytes).",
        valueName: "file"))
    var jwtKey: String?

    @Option(name: .customLong("jwt-audience"), help: "With --jwt-key: the \"aud\" a token must name.")
    var jwtAudience: String?

    @Option(name: .customLong("jwt-issuer"), help: "With --jwt-key: the \"iss\" a token must carry.")
    var jwtIssuer: String?

    @Option(name: .customLong("jwt-leeway"), help: "With --jwt-key: seconds of clock difference allowed for \"exp\" and \"nbf\" (0...600).")
    var jwtLeeway = 30

    @Option(help: "Longest bearer token looked at, in bytes (longer ones get 401 unread).")
    var maxTokenLength = 4096

    @Option(help: "Most cookie sessions (POST /session) at once; past it expired ones, then the token's own oldest, are dropped; 503 when all are others' and live.")
    var maxSessions = 10_000

    @Option(help: "Most cookie sessions per credential (a static token, a JWT's sub, or a JWT without one); past it its own oldest session ends.")
    var maxSessionsPerCredential = 16

    @Option(help: "Seconds a session lasts at most (it also ends when its token expires).")
    var sessionLifetime = 8 * 3600

    @Flag(help: "Session cookies get Secure (only sent over HTTPS): set it when clients reach the server over TLS.")
    var secureCookies = false

    @Flag(name: .customLong("private"), help: "Reads (models, /events, /bindings, /metrics) need a token with the read scope too.")
    var privateReads = false

    @Option(name: .customLong("allow-origin"), help: ArgumentHelp(
        "Another origin whose pages may call the API (CORS) and write, e.g. https://app.example.com (repeatable).",
        valueName: "origin"))
    var allowedOrigins: [String] = []
    @Option(name: .customLong("tls-cert"), help: ArgumentHelp(
        "PEM certificate (then intermediates): serve HTTPS only, with Strict-Transport-Security. Needs --tls-key. SIGHUP reloads both files.",
        valueName: "file"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("Unencrypted PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(name: .customLong("trust-proxy"), help: ArgumentHelp(
        "Address of a reverse proxy whose X-Forwarded-For and X-Forwarded-Proto are believed (repeatable); from other peers they are ignored.",
        valueName: "address"))
    var trustedProxies: [String] = []

    @Option(help: ArgumentHelp(
        "Folder for livebind.sqlite: models, event ids, retained events and bindings made over HTTP survive restarts; writes are answered once on disk.",
        valueName: "dir"))
    var data: String?

    @Option(help: "With --data: bytes of commit log after which changed models are checkpointed whole (a restart replays at most about this much).")
    var checkpointBytes = 16 << 20

    @Option(help: ArgumentHelp(
        "Join a cluster: NATS URLs (comma-separated) of the JetStream servers holding the shared state; one stream replica per URL, up to 3.",
        valueName: "nats://host:port,..."))
    var cluster: String?

    @Option(help: ArgumentHelp("With --cluster: this node's name, sent as LiveBind-Node (default: <hostname>:<port>).",
                               valueName: "name"))
    var nodeName: String?

    @Option(help: ArgumentHelp("With --cluster: the JetStream stream holding the commits (made when missing).", valueName: "name"))
    var clusterStream = "LIVEBIND"

    @Option(help: "With --cluster: seconds a write may wait for the stream (an election, a lost server) before it gets 503.")
    var clusterWriteTimeout = 5.0

    @Option(help: "With --cluster: commits between two snapshots of every model (kept in JetStream; a starting node loads the last one); 0 takes none.")
    var clusterSnapshotInterval = 10_000

    @Option(help: "With --cluster: most commits the stream keeps, oldest dropped first (at least 3 snapshot intervals); 0 keeps all. Applies when the stream is made.")
    var clusterMaxCommits = 0

    func validate() throws {
        guard (1...65535).contains(port) || port == 0 else { throw ValidationError("--port must be 0...65535") }
        guard maxStreams >= 1 else { throw ValidationError("--max-streams must be at least 1") }
        guard maxStreamsPerAddress >= 0 else { throw ValidationError("--max-streams-per-address must be 0 (no cap) or more") }
        guard (maxConnectionsPerAddress ?? 0) >= 0 else {
            throw ValidationError("--max-connections-per-address must be 0 (no cap) or more")
        }
        guard heartbeat > 0 else { throw ValidationError("--heartbeat must be more than 0 seconds") }
        guard bodyLimit >= 1 else { throw ValidationError("--body-limit must be at least 1 byte") }
        guard writeRate >= 0, writeRate.isFinite else { throw ValidationError("--write-rate must be 0 (no limit) or more") }
        guard writeBurst >= 0 else { throw ValidationError("--write-burst must be 0 (the rate) or more") }
        guard writeRateClients >= 1 else { throw ValidationError("--write-rate-clients must be at least 1") }
        guard (1...StoreLimits.depthCeiling).contains(maxDepth) else {
            throw ValidationError("--max-depth must be 1...\(StoreLimits.depthCeiling)")
        }
        guard maxModelSize >= 1, maxStoreSize >= 1 else { throw ValidationError("--max-model-size and --max-store-size must be at least 1 byte") }
        guard maxBindings >= 1 else { throw ValidationError("--max-bindings must be at least 1") }
        guard maxPatchOperations >= 1 else { throw ValidationError("--max-patch-operations must be at least 1") }
        guard retainedEvents >= 1 else { throw ValidationError("--retained-events must be at least 1") }
        guard checkpointBytes >= 1 else { throw ValidationError("--checkpoint-bytes must be at least 1") }
        guard retainedBytes >= 1 else { throw ValidationError("--retained-bytes must be at least 1") }
        guard streamBufferLimit >= 0 else { throw ValidationError("--stream-buffer-limit must be at least 0") }
        guard maxUnsentBytes >= 1 else { throw ValidationError("--max-unsent-bytes must be at least 1") }
        guard maxSubscriptions >= 1 else { throw ValidationError("--max-subscriptions must be at least 1") }
        guard maxWindow >= 1 else { throw ValidationError("--max-window must be at least 1") }
        guard connectionTimeout >= 1 else { throw ValidationError("--connection-timeout must be at least 1 second") }
        guard requestTimeout > 0 else { throw ValidationError("--request-timeout must be more than 0 seconds") }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together: pass both (PEM files) or neither")
        }
        guard (0...600).contains(jwtLeeway) else { throw ValidationError("--jwt-leeway must be 0...600 seconds") }
        guard jwtKey != nil || (jwtAudience == nil && jwtIssuer == nil) else {
            throw ValidationError("--jwt-audience and --jwt-issuer need --jwt-key")
        }
        guard maxTokenLength >= 16 else { throw ValidationError("--max-token-length must be at least 16 bytes") }
        guard maxSessions >= 1 else { throw ValidationError("--max-sessions must be at least 1") }
        guard maxSessionsPerCredential >= 1 else { throw ValidationError("--max-sessions-per-credential must be at least 1") }
        guard sessionLifetime >= 1 else { throw ValidationError("--session-lifetime must be at least 1 second") }
        if let cluster {
            guard !clusterServers(cluster).isEmpty, clusterServers(cluster).allSatisfy({ $0.hasPrefix("nats://") }) else {
                throw ValidationError("--cluster takes nats://host:port URLs, comma-separated")
            }
            guard data == nil else { throw ValidationError("--cluster keeps the state in NATS JetStream: drop --data") }
        }
        guard clusterSnapshotInterval >= 0, clusterMaxCommits >= 0 else {
            throw ValidationError("--cluster-snapshot-interval and --cluster-max-commits must be 0 or more")
        }
        guard clusterMaxCommits == 0 || (clusterSnapshotInterval > 0 && clusterMaxCommits >= 3 * clusterSnapshotInterval) else {
            throw ValidationError("--cluster-max-commits needs snapshots: at least 3 times --cluster-snapshot-interval")
        }
        guard clusterWriteTimeout > 0, clusterWriteTimeout <= 300 else {
            throw ValidationError("--cluster-write-timeout must be more than 0 and at most 300 seconds")
        }
        guard !clusterStream.isEmpty, clusterStream.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
            throw ValidationError("--cluster-stream must be letters, digits, _ and -")
        }
    }

    mutating func run() throws {
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "livebind")
        var configuration = LiveBindServer.Configuration()
        configuration.host = host
        configuration.port = port
        configuration.publicDirectory = `public`
        if `public` == nil { configuration.builtinFiles = BuiltinPublic.files() }
        configuration.maxStreams = maxStreams
        configuration.maxStreamsPerAddress = maxStreamsPerAddress
        configuration.maxConnectionsPerAddress = maxConnectionsPerAddress
        configuration.heartbeat = .milliseconds(Int(heartbeat * 1000))
        configuration.bodyLimit = bodyLimit
        configuration.writeRate = writeRate
        configuration.writeBurst = writeBurst
        configuration.writeRateClients = writeRateClients
        configuration.retainedEvents = retainedEvents
        configuration.checkpointBytes = checkpointBytes
        configuration.limits.maxDepth = maxDepth
        configuration.limits.maxModelBytes = maxModelSize
        configuration.limits.maxStoreBytes = maxStoreSize
        configuration.limits.maxPatchOperations = maxPatchOperations
        configuration.maxBindings = maxBindings
        configuration.retainedBytes = retainedBytes
        configuration.streamBufferLimit = streamBufferLimit
        configuration.maxUnsentBytes = maxUnsentBytes
        configuration.connectionTimeout = connectionTimeout
        configuration.maxSubscriptions = maxSubscriptions
        configuration.maxWindow = maxWindow
        configuration.requestTimeout = .milliseconds(Int(requestTimeout * 1000))
        configuration.access = try TokensFile.policy(tokens: tokens, file: tokensFile, privateReads: privateReads,
                                                     allowedOrigins: allowedOrigins)
        if let jwtKey {
            guard let key = ConfigFile.readAll(jwtKey) else { throw ValidationError("cannot read --jwt-key file '\(jwtKey)'") }
            configuration.access.jwt = AccessPolicy.JWT(key: key, audience: jwtAudience, issuer: jwtIssuer,
                                                        leewaySeconds: jwtLeeway)
        }
        configuration.maxTokenLength = maxTokenLength
        configuration.maxSessions = maxSessions
        configuration.maxSessionsPerCredential = maxSessionsPerCredential
        configuration.sessionLifetime = .seconds(sessionLifetime)
        configuration.secureCookies = secureCookies
        configuration.dataDirectory = data
        configuration.tlsCertificateFile = tlsCertificate
        configuration.tlsKeyFile = tlsKey
        configuration.trustedProxies = trustedProxies
        if let cluster {
            var settings = ClusterConfiguration(servers: clusterServers(cluster), nodeName: nodeName ?? defaultNodeName)
            settings.stream = clusterStream
            settings.writeTimeout = .milliseconds(Int(clusterWriteTimeout * 1000))
            settings.snapshotInterval = clusterSnapshotInterval
            settings.maxCommits = clusterMaxCommits
            configuration.cluster = settings
        }
        FileLimit.raise(toAtLeast: configuration.maxStreams + 1024, logger: logger)

        let server: LiveBindServer
        do {
            server = try LiveBindServer(configuration: configuration, logger: logger)
        } catch {
            throw ValidationError("\(error)")
        }
        // Definition files and the demo create their models only when the data directory lacks them.
        let app = try Application(registry: server.bindings, configFile: config, logger: logger)
        if demo ?? (config == nil) { app.startDemo() }
        do {
            try server.start()
        } catch {
            throw ValidationError("\(error)")
        }
        logger.info("Open \(server.usesTLS ? "https" : "http")://\(displayHost):\(server.port)/ for the dashboard (Ctrl-C stops)")
        if server.usesTLS { CertificateReloadSignal.install(server: server, logger: logger) }
        ShutdownSignals.install(logger: logger) {
            app.stop()
            server.stop()
            Glibc.exit(0)
        }
        dispatchMain()
    }

    private func clusterServers(_ list: String) -> [String] {
        list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `<hostname>:<port>`.
    private var defaultNodeName: String {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + ":\(port)"
    }

    private var displayHost: String {
        switch host {
        case "0.0.0.0", "::": "127.0.0.1"
        case _ where host.contains(":"): "[\(host)]"
        default: host
        }
    }
}
