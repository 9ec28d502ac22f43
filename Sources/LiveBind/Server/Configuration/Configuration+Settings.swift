import LiveBindEngine
extension LiveBindServer.Configuration {
    /// Every setting with a flag, in `--help`'s order: the one place each is declared (see ``Setting``).
    package static let settings: [Setting<Self>] = network + streams + limits + access + persistence

    private static let network: [Setting<Self>] = [
        .init(
            "host", "Network",
            .text(
                \.network.host, unit: "ADDRESS", rule: "not empty",
                valid: { !$0.isEmpty }),
            "Address to listen on (numeric IPv4/IPv6, or localhost)."),
        .init("port", "Network", .integer(\.network.port, 0...65535, unit: "N"), "Port to listen on (0 picks a free one)."),
        .init(
            "public", "Network", .optionalText(\.network.publicDirectory, unit: "DIR", absent: "the built-in files"),
            "Folder served at / instead of the built-in dashboard, examples and openapi.json (for development: edits show without a rebuild)."
        ),
        .init(
            "content-security-policy", "Network",
            .optionalText(
                \.network.contentSecurityPolicy, unit: "POLICY",
                absent: "the built-in policy"),
            "Content-Security-Policy of the files served from --public, one header line (the built-in dashboard keeps its own): the built-in policy allows the site's own scripts, styles and connections and no inline style or script; empty sends none."
        ),
        .init(
            "tls-cert", "Network", .optionalText(\.network.tlsCertificateFile, unit: "FILE", absent: "none (plain HTTP)"),
            "PEM certificate (then intermediates): serve HTTPS only, with Strict-Transport-Security. Needs --tls-key. SIGHUP reloads both files."
        ),
        .init(
            "tls-key", "Network", .optionalText(\.network.tlsKeyFile, unit: "FILE", absent: "none"),
            "Unencrypted PEM private key of --tls-cert."),
        .init(
            "trust-proxy", "Network", .list(\.network.trustedProxies, unit: "ADDRESS"),
            "Address of a reverse proxy whose X-Forwarded-For and X-Forwarded-Proto are believed (repeatable); from other peers they are ignored."
        ),
        .init(
            "connection-limit", "Network",
            .optionalInteger(
                \.network.connectionLimit, 1...1_000_000, unit: "N",
                automatic: "--max-streams + 512"),
            "Most connections held at once (streams and requests)."),
        .init(
            "max-connections-per-address", "Network",
            .optionalInteger(
                \.network.maxConnectionsPerAddress, 0...Int.max, unit: "N",
                automatic: "128; none on loopback or with --trust-proxy"),
            "Most connections from one TCP peer address; past it a new one is closed at once. 0: no cap."),
        .init(
            "connection-timeout", "Network", .integer(\.network.connectionTimeout, 1...86_400, unit: "S"),
            "Seconds without progress before a connection is closed (a client that stopped reading or sending); never less than two heartbeats plus 5."
        ),
        .init(
            "request-timeout", "Network", .seconds(\.network.requestTimeout, .leastNonzeroMagnitude...3600),
            "Seconds a client may take to send a whole request, headers and body (slowloris guard)."),
        .init(
            "threads", "Network", .integer(\.network.threadPoolSize, 1...1024, unit: "N"),
            "Threads answering requests and writing streams."),
        .init(
            "connection-memory", "Network", .integer(\.network.connectionMemoryLimit, 4096...(16 << 20), unit: "BYTES"),
            "Memory per connection for its request headers and write buffer (headers past about half of it get 431)."),
        .init(
            "send-buffer", "Network", .integer(\.network.sendBufferSize, 0...(64 << 20), unit: "BYTES"),
            "Kernel send buffer per socket, so a stalled reader holds little memory (0: the system's default).")
    ]

    private static let streams: [Setting<Self>] = [
        .init(
            "max-streams", "Streams", .integer(\.streams.maxStreams, 1...1_000_000, unit: "N"),
            "Most event streams open at once; more get 503. Lowered at start to what the open-file limit allows."),
        .init(
            "max-streams-per-address", "Streams", .integer(\.streams.maxStreamsPerAddress, 0...Int.max, unit: "N"),
            "Most event streams one client address may hold (the forwarded one with --trust-proxy; loopback not counted); more get 503. 0: no cap."
        ),
        .init(
            "heartbeat", "Streams", .seconds(\.streams.heartbeat, .leastNonzeroMagnitude...3600),
            "Seconds between heartbeat comments on idle event streams."),
        .init(
            "retained-events", "Streams", .integer(\.streams.retainedEvents, 1...Int.max, unit: "N"),
            "Most recent events kept for Last-Event-ID resumes (and in the data directory)."),
        .init(
            "retained-bytes", "Streams", .integer(\.streams.retainedBytes, 1...Int.max, unit: "BYTES"),
            "Most bytes of recent events kept for resumes, shared by every stream (the newest event is always kept)."),
        .init(
            "stream-buffer-limit", "Streams", .integer(\.streams.streamBufferLimit, 0...Int.max, unit: "BYTES"),
            "Most bytes of snapshots and events a stream may hold unsent while its client reads nothing; past it the stream is closed."),
        .init(
            "max-unsent-bytes", "Streams", .integer(\.streams.maxUnsentBytes, 1...Int.max, unit: "BYTES"),
            "Most bytes of snapshots, replays and events all streams together may hold unsent (each shared frame counted once, a snapshot before it is made); past it streams whose clients read nothing are closed, fattest first, and new streams get 503 (413 when their own snapshots reach it)."
        ),
        .init(
            "max-subscriptions", "Streams", .integer(\.streams.maxSubscriptions, 1...Int.max, unit: "N"),
            "Most sub values (locations and windows) on one event stream (422 past it)."),
        .init(
            "max-window", "Streams", .integer(\.streams.maxWindow, 1...Int.max, unit: "N"),
            "Most rows in one window of an event stream (sub=…;first=N, last=N, limit=N; 422 past it)."),
        .init(
            "max-views", "Streams", .integer(\.streams.maxViews, 1...Int.max, unit: "N"),
            "Most distinct views (sub=…;where=…;order=…) the streams show at once, each keeping its array arranged; a stream asking for another gets 503."
        ),
        .init(
            "max-view-rows", "Streams", .integer(\.streams.maxViewRows, 1...Int.max, unit: "N"),
            "Most array elements all views together keep arranged (about 200 bytes each); a stream asking for a view past it gets 503, and as arrays grow the largest views past it end their streams."
        ),
        .init(
            "max-view-terms", "Streams", .integer(\.streams.maxViewTerms, 1...Int.max, unit: "N"),
            "Most values one view's where compares an element with (one per condition, one per in value): a view of n rows costs at most n times this many comparisons (422 past it; view bindings too)."
        ),
        .init(
            "max-view-in", "Streams", .integer(\.streams.maxViewInValues, 1...Int.max, unit: "N"),
            "Most values in one in(…) list of a view's where (422 past it; view bindings too)."),
        .init(
            "max-view-query-bytes", "Streams", .integer(\.streams.maxViewQueryBytes, 1...Int.max, unit: "BYTES"),
            "Most bytes of one view's where and order together (422 past it; view bindings too)."),
        .init(
            "max-presence-per-room", "Streams", .integer(\.streams.maxPresencePerRoom, 1...1_000_000, unit: "N"),
            "Most entries in one presence room (POST /presence/{room}); a join past it gets 503."),
        .init(
            "max-presence-per-caller", "Streams", .integer(\.streams.maxPresencePerCaller, 1...1_000_000, unit: "N"),
            "Most presence entries one credential (or, anonymous, one address) holds in all rooms; a join past it gets 422."),
        .init(
            "max-presence-bytes", "Streams", .integer(\.streams.maxPresenceBytes, 2...(1 << 20), unit: "BYTES"),
            "Most bytes of one presence entry's meta, encoded; more get 422."),
        .init(
            "max-disconnect-bytes", "Streams", .integer(\.streams.maxDisconnectBytes, 2...(16 << 20), unit: "BYTES"),
            "Most bytes of the writes one presence entry registers for when its connection ends (PUT /presence/{room}/{id}/disconnect); more get 413."
        ),
        .init(
            "presence-grace", "Streams", .seconds(\.streams.presenceGrace, 0...3600),
            "Seconds a presence entry stays with no stream holding its key (a stream that reconnects within it keeps the entry).")
    ]

    private static let limits: [Setting<Self>] = [
        .init("body-limit", "Limits", .integer(\.limits.bodyLimit, 1...Int.max, unit: "BYTES"), "Largest request body (413 past it)."),
        .init(
            "max-depth", "Limits", .integer(\.limits.store.maxDepth, 1...StoreLimits.depthCeiling, unit: "N"),
            "Deepest nesting of a stored model (the root object is level 1)."),
        .init(
            "max-model-size", "Limits", .integer(\.limits.store.maxModelBytes, 1...Int.max, unit: "BYTES"),
            "Largest model in bytes of compact JSON (413 past it)."),
        .init(
            "max-store-size", "Limits", .integer(\.limits.store.maxStoreBytes, 1...Int.max, unit: "BYTES"),
            "Largest total of all models in bytes of compact JSON (413 past it)."),
        .init(
            "max-patch-operations", "Limits", .integer(\.limits.store.maxPatchOperations, 1...Int.max, unit: "N"),
            "Most operations in one JSON Patch (422 past it)."),
        .init(
            "max-list-bytes", "Limits", .integer(\.limits.maxListBytes, 1024...Int.max, unit: "BYTES"),
            "Most bytes of one page of GET /models or GET /bindings; a longer list ends the page with \"next\", to ask for with ?after=."),
        .init(
            "max-bindings", "Limits", .integer(\.limits.maxBindings, 1...Int.max, unit: "N"),
            "Most bindings at once (definition file and POST /bindings together; 422 past it)."),
        .init(
            "write-rate", "Limits", .number(\.limits.writeRate, 0...1_000_000, unit: "N"),
            "Writes a second per client (bearer token, or address without one) after --write-burst; 429 past it. 0: no limit."),
        .init(
            "write-burst", "Limits", .integer(\.limits.writeBurst, 0...1_000_000, unit: "N"),
            "Writes a client may make at once before --write-rate applies (0: the rate, rounded up)."),
        .init(
            "write-rate-clients", "Limits", .integer(\.limits.writeRateClients, 1...Int.max, unit: "N"),
            "Most clients whose write rate is tracked at once (those idle longest are forgotten first)."),
        .init(
            "idempotency-window", "Limits", .seconds(\.limits.idempotencyWindow, 1...31_536_000),
            "Seconds a write's answer is kept for a retry with the same Idempotency-Key."),
        .init(
            "idempotency-keys", "Limits", .integer(\.limits.idempotencyKeys, 1...100_000_000, unit: "N"),
            "Most Idempotency-Key answers kept at once (the oldest are forgotten first).")
    ]

    private static let access: [Setting<Self>] = [
        .init(
            "max-token-length", "Access", .integer(\.access.maxTokenLength, 16...(1 << 20), unit: "BYTES"),
            "Longest bearer token looked at (longer ones get 401 unread)."),
        .init(
            "max-sessions", "Access", .integer(\.access.maxSessions, 1...Int.max, unit: "N"),
            "Most cookie sessions (POST /session) at once; past it expired ones, then the token's own oldest, are dropped; 503 when all are others' and live."
        ),
        .init(
            "max-sessions-per-credential", "Access", .integer(\.access.maxSessionsPerCredential, 1...Int.max, unit: "N"),
            "Most cookie sessions per credential (a static token, a JWT's sub, or a JWT without one); past it its own oldest session ends."),
        .init(
            "session-lifetime", "Access", .seconds(\.access.sessionLifetime, 1...31_536_000),
            "Seconds a session lasts at most (it also ends when its token expires)."),
        .init(
            "audit-addresses", "Access", .flag(\.access.auditAddresses),
            "Record the client's address as the author of anonymous writes in the history's audit trail (off: they are recorded as anonymous)."
        ),
        .init(
            "secure-cookies", "Access", .flag(\.access.secureCookies),
            "Session cookies get Secure (only sent over HTTPS): set it when clients reach the server over TLS.")
    ]

    private static let persistence: [Setting<Self>] = [
        .init(
            "data", "Persistence", .optionalText(\.persistence.dataDirectory, unit: "DIR", absent: "none (in memory)"),
            "Folder for livebind.sqlite (models, event ids, retained events and bindings made over HTTP survive restarts; writes are answered once on disk) and history.sqlite (--history); with --cluster, the node's history only."
        ),
        .init(
            "checkpoint-bytes", "Persistence", .integer(\.persistence.checkpointBytes, 1...Int.max, unit: "BYTES"),
            "With --data: bytes of commit log after which changed models are checkpointed whole (a restart replays at most about this much)."
        ),
        .init(
            "history", "Persistence",
            .text(
                \.persistence.history, unit: "AGE,SIZE", rule: HistoryRetention.rule,
                valid: { HistoryRetention(parsing: $0) != nil }),
            "With --data: history kept in history.sqlite for ?history, ?at and /events?since= (commits younger than AGE, at most about SIZE, whichever first); 0 keeps none."
        ),
        .init(
            "history-max-scan", "Persistence", .integer(\.persistence.historyMaxScan, 1...Int.max, unit: "N"),
            "Most recorded changes one history query may read (422 past it)."),
        .init(
            "history-max-points", "Persistence", .integer(\.persistence.historyMaxPoints, 1...Int.max, unit: "N"),
            "Most points one history query may answer without step=, and most events one /events?since= replays (422 past it)."),
        .init(
            "history-max-buckets", "Persistence", .integer(\.persistence.historyMaxBuckets, 1...Int.max, unit: "N"),
            "Most buckets one history query may answer with step= (422 past it)."),
        .init(
            "history-max-bytes", "Persistence", .integer(\.persistence.historyMaxBytes, 1...Int.max, unit: "BYTES"),
            "Most bytes one history answer may hold (?history, CSV, ?at=, and what /events?since= sends before going live), counted as it is written (422 past it)."
        )
    ]
}

extension ClusterConfiguration {
    /// Every setting of a cluster node with a flag (used with `--cluster`), declared once (see ``Setting``).
    package static let settings: [Setting<Self>] = [
        // It travels in NATS and HTTP headers, which must carry it byte for byte.
        .init(
            "node-name", "Cluster",
            .text(
                \.nodeName, unit: "NAME", rule: "1-64 printable ASCII characters, no space",
                valid: { name in
                    !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { (0x21...0x7E).contains($0) }
                }),
            "With --cluster: this node's name, sent as LiveBind-Node (default: <hostname>:<port>)."),
        .init(
            "cluster-stream", "Cluster",
            .text(
                \.stream, unit: "NAME", rule: "letters, digits, _ and -",
                valid: { name in
                    !name.isEmpty && name.utf8.count <= 64
                        && name.unicodeScalars.allSatisfy {
                            $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
                        }
                }), "With --cluster: the JetStream stream holding the commits (made when missing)."),
        .init(
            "cluster-write-timeout", "Cluster", .seconds(\.writeTimeout, .leastNonzeroMagnitude...300),
            "With --cluster: seconds a write may wait for the stream (an election, a lost server) before it gets 503."),
        .init(
            "cluster-snapshot-interval", "Cluster", .integer(\.snapshotInterval, 0...Int.max, unit: "N"),
            "With --cluster: messages of the stream (a message is one write turn's commits) between two snapshots of every model (kept in JetStream; a starting node loads the last one); 0 takes none."
        ),
        .init(
            "cluster-max-commits", "Cluster", .integer(\.maxCommits, 0...Int.max, unit: "N"),
            "With --cluster: most messages (write turns) the stream keeps, oldest dropped first (at least 3 snapshot intervals); 0 keeps all. Applies when the stream is made."
        )
    ]

    /// Throws when a setting holds a value it does not take (``settings``), when there is no NATS URL,
    /// or when ``maxCommits`` would drop commits no snapshot covers.
    public func validate() throws(ConfigurationError) {
        for setting in Self.settings { try setting.check(self) }
        guard !servers.isEmpty, servers.allSatisfy({ $0.hasPrefix("nats://") }) else {
            throw ConfigurationError(flag: "cluster", reason: "takes nats://host:port URLs, comma-separated")
        }
        guard maxCommits == 0 || (snapshotInterval > 0 && snapshotInterval <= maxCommits / 3) else {
            throw ConfigurationError(flag: "cluster-max-commits", reason: "needs snapshots: at least 3 times --cluster-snapshot-interval")
        }
    }
}
