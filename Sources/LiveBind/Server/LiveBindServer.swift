import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import LiveBindEngine
internal import LiveBindHTTP

/// Serves a store's models over HTTP and their changes as Server-Sent Events, on libmicrohttpd.
///
/// ```swift
/// let store = Store()
/// let server = LiveBindServer(store: store, configuration: .init())   // bindings at server.bindings
/// try server.start()          // http://127.0.0.1:8080/
/// try store.put("sensor", ["temperature": 21.5])
/// server.stop()
/// ```
public final class LiveBindServer: Sendable {
    /// The models served.
    public let store: Store
    /// The live bindings of `store`, served at `/bindings`.
    public let bindings: BindingRegistry
    /// The configuration the server was made with.
    public let configuration: Configuration
    let logger: Logger
    let counters = ServerCounters()
    /// The data directory's database when `configuration.persistence.dataDirectory` is set; nil keeps state in memory.
    let database: StateDatabase?
    /// The data directory's history (`--history`), nil when none is kept.
    let history: HistoryDatabase?
    /// This node of a cluster when `configuration.cluster` is set: the store's commit log.
    let cluster: ClusterNode?
    /// Whether the bindings kept in the data directory were restored (once, at the first start).
    let bindingsRestored = OrderedMutex(false)
    /// The first event of the span in which the last run had presence rooms open, when it ended with
    /// some open (a crash; 0: none): a restart empties them, so a stream that resumes from within the
    /// span and may see rooms starts again from a snapshot.
    let roomsOpenSince: UInt64
    /// The answers to writes sent with `Idempotency-Key`.
    let idempotency: IdempotencyTable
    /// Numbers the requests (`HTTPRequest.serial`).
    private let requestSerial = RequestSerial()

    /// What exists only while running.
    struct Running: Sendable {
        let daemon: MicroHTTPDDaemon
        let hub: EventHub
        let feed: ObservationToken
        let heartbeat: HeartbeatTimer?
        /// Presence rooms (none in a cluster) and the timer that removes entries whose time is up.
        var rooms: PresenceRooms? = nil
        var sweeper: HeartbeatTimer? = nil
        /// The routes served, as declared.
        var routes: [Router.Entry] = []
    }
    private let running = OrderedMutex<Running?>(nil)

    /// Makes a stopped server for `store`, serving the bindings of `bindings` (a new registry if nil).
    ///
    /// The state is in memory. For a data directory use ``init(configuration:logger:)``:
    /// `configuration.persistence.dataDirectory` must be nil here.
    public convenience init(
        store: Store, bindings: BindingRegistry? = nil, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "livebind.server")
    ) {
        precondition(
            configuration.persistence.dataDirectory == nil,
            "a data directory needs LiveBindServer(configuration:), which loads the store from it")
        precondition(configuration.cluster == nil, "a cluster needs LiveBindServer(configuration:), which loads the store from it")
        self.init(store: store, bindings: bindings, configuration: configuration, logger: logger, database: nil)
    }

    init(
        store: Store, bindings: BindingRegistry?, configuration: Configuration, logger: Logger, database: StateDatabase?,
        cluster: ClusterNode? = nil, history: HistoryDatabase? = nil, roomsOpenSince: UInt64 = 0
    ) {
        precondition(bindings == nil || bindings!.store === store, "the binding registry must belong to the served store")
        self.store = store
        self.bindings =
            bindings
            ?? BindingRegistry(
                store: store, transforms: TransformRegistry(viewLimits: configuration.streams.viewLimits),
                maxBindings: configuration.limits.maxBindings)
        self.configuration = configuration
        self.logger = logger
        self.database = database
        self.cluster = cluster
        self.history = history
        self.roomsOpenSince = roomsOpenSince
        idempotency = IdempotencyTable(
            window: configuration.limits.idempotencyWindow,
            capacity: configuration.limits.idempotencyKeys)
    }

    /// The daemon while running.
    var runningDaemon: MicroHTTPDDaemon? { running.withLock { $0?.daemon } }
    /// Every route while running, with its methods, pattern and what it needs; empty when stopped.
    var routeTable: [Router.Entry] { running.withLock { $0?.routes ?? [] } }

    /// The bound port while running (the real one when configured with port 0), else 0.
    public var port: Int { Int(running.withLock { $0?.daemon.port } ?? 0) }

    /// Binds and starts serving. Throws when the address is invalid or taken, when already running,
    /// or when stopping closed its data directory.
    public func start() throws(ServerError) {
        do { try configuration.validate() } catch { throw .invalidConfiguration(error) }
        if let problem = configuration.access.policy.problem() { throw .invalidAccessPolicy(problem) }
        if database?.isClosed == true {
            throw .dataDirectoryUnusable("this server was stopped and closed it; make a new LiveBindServer to open it again")
        }
        let proxies = try TrustedProxies(configuration.network.trustedProxies)
        let certificate = try loadCertificate()
        let hub = EventHub(
            store: store,
            settings: .init(
                retainedEvents: configuration.streams.retainedEvents, retainedBytes: configuration.streams.retainedBytes,
                streamBufferLimit: configuration.streams.streamBufferLimit, maxUnsentBytes: configuration.streams.maxUnsentBytes,
                maxStreams: configuration.streams.maxStreams,
                maxSubscriptions: configuration.streams.maxSubscriptions, maxWindow: configuration.streams.maxWindow,
                maxViews: configuration.streams.maxViews, maxViewRows: configuration.streams.maxViewRows,
                viewLimits: configuration.streams.viewLimits,
                silentPeerRounds: Self.silentPeerRounds(heartbeat: configuration.streams.heartbeat),
                beforeAppend: configuration.beforeEventAppend,
                whileArranging: configuration.whileArrangingView))
        let verifier = try configuration.access.policy.jwt.map { settings throws(ServerError) in try JWTVerifier(settings: settings) }
        let sessions =
            configuration.access.policy.requiresTokens
            ? SessionTable(
                capacity: configuration.access.maxSessions,
                perCredential: configuration.access.maxSessionsPerCredential,
                lifetime: configuration.access.sessionLifetime) : nil
        let access = AccessControl(
            policy: configuration.access.policy, listeningOn: configuration.network.host,
            knowsScheme: certificate != nil || !proxies.isEmpty, verifier: verifier,
            sessions: sessions, maxTokenLength: configuration.access.maxTokenLength)
        let streams = configuration.streams
        let rooms =
            cluster == nil
            ? PresenceRooms(
                store: store,
                limits: .init(
                    perRoom: streams.maxPresencePerRoom, entryBytes: streams.maxPresenceBytes,
                    perCaller: streams.maxPresencePerCaller, grace: streams.presenceGrace,
                    disconnectBytes: streams.maxDisconnectBytes),
                applyDisconnect: { [store, logger] writes in writes.apply(to: store, logger: logger) }) : nil
        let router = try makeRouter(hub: hub, access: access, rooms: rooms)
        let limiter =
            configuration.limits.writeRate > 0
            ? WriteRateLimiter(
                rate: configuration.limits.writeRate,
                burst: configuration.limits.writeBurst > 0
                    ? configuration.limits.writeBurst
                    : Int(configuration.limits.writeRate.rounded(.up)),
                maxClients: configuration.limits.writeRateClients)
            : nil
        var options = daemonOptions
        // Rate limits and proxies need every request's address; the stream cap only that of `/events`,
        // presence that of a join (an anonymous caller's entries are counted by address).
        options.clientAddresses =
            limiter != nil || !proxies.isEmpty || configuration.access.auditAddresses
            ? .all
            : .paths((configuration.streams.maxStreamsPerAddress > 0 ? ["/events"] : []) + ["/presence/"])
        options.certificate = certificate
        let daemon = MicroHTTPDDaemon(
            options: options,
            handlers: makeHandlers(
                router, access: access, limiter: limiter,
                proxies: proxies),
            counters: counters, logger: logger)
        let claimed = running.withLock { current in
            guard current == nil else { return false }
            current = Running(daemon: daemon, hub: hub, feed: ObservationToken {}, heartbeat: nil)
            return true
        }
        guard claimed else { throw .alreadyRunning }
        restoreBindings()
        // The feed first, then the retained history, then clients: no commit falls between them.
        let events = EventFeed(hub: hub)
        let observation = store.observeDurable { commits in events.publish(commits) }
        let recording = history.map { history in store.observeDurable { commits in history.enqueue(commits) } }
        let feed = ObservationToken {
            observation.cancel()
            recording?.cancel()
            events.stop()
        }
        catchUp(hub)
        // What was written before the start (a --config file's models) is read only once durable:
        // on disk before the first request, or a client that asks at once finds nothing.
        store.log?.flush()
        do throws(TransportError) {
            try daemon.start()
        } catch {
            feed.cancel()
            running.withLock { $0 = nil }
            throw ServerError(error)
        }
        logStateLocation()
        // Two ticks per interval: an idle stream gets a heartbeat every interval, a busy one none.
        let heartbeat = HeartbeatTimer(interval: configuration.streams.heartbeat / 2) { [weak hub] in hub?.heartbeat() }
        // Four sweeps per grace period: an entry leaves within 1.25 of it.
        let sweeper = rooms.map { rooms in
            HeartbeatTimer(interval: max(streams.presenceGrace / 4, .milliseconds(50))) { rooms.sweep() }
        }
        running.withLock {
            $0 = Running(
                daemon: daemon, hub: hub, feed: feed, heartbeat: heartbeat, rooms: rooms, sweeper: sweeper,
                routes: router.entries)
        }
        logger.info("listening on \(certificate == nil ? "http" : "https")://\(configuration.network.host):\(daemon.port)/")
        logger.info("\(configuration.access.policy.summary)")
    }

    /// Heartbeat rounds (two per interval) before an idle stream whose peer acknowledges nothing is
    /// cut: two, or two seconds' worth when the interval is shorter (delayed acknowledgements).
    static func silentPeerRounds(heartbeat: Duration) -> Int {
        let round = heartbeat / 2
        return max(2, Int((Duration.seconds(2) / round).rounded(.up)))
    }

    /// Stops in the order libmicrohttpd needs: stop accepting, end every stream (resuming the
    /// suspended ones), wait briefly for them to close, then stop the daemon. Every thread and file
    /// of the server is released when it returns: with a data directory, what was written is on disk
    /// and the directory is closed (a new server may open it; this one cannot start again, and writes
    /// to its store throw). Safe to call twice.
    public func stop() {
        guard
            let current = running.withLock({ current in
                defer { current = nil }; return current
            })
        else {
            return closeDataDirectory()
        }
        current.daemon.quiesce()
        // Writes waiting for the disk get their answers before the daemon stops.
        store.log?.flush()
        if !current.daemon.waitForDeferredAnswers(timeout: .seconds(5)) {
            logger.warning("writes still waiting for their answers at shutdown")
        }
        cluster?.stop()
        current.feed.cancel()
        history?.stop()
        current.heartbeat?.cancel()
        let left = current.hub.shutdown(deadline: .seconds(5))
        if left > 0 { logger.warning("\(left) streams still open at shutdown") }
        current.sweeper?.cancel()
        // The rooms stand for connections, which are gone (a data directory does not keep them).
        current.rooms?.removeAll()
        current.daemon.stop()
        closeDataDirectory()
        logger.info("stopped")
    }

    /// Writes what is committed and closes the data directory's file, so that another server (or
    /// process) can open it once ``stop()`` returns. Later writes to the store throw
    /// ``StoreError/storageFailed(_:)``.
    private func closeDataDirectory() {
        guard let database, !database.isClosed else { return }
        store.refuseWrites(CommitWriter.closedReason)
        database.close()
        history?.stop()
        logger.info("closed the data directory \(database.directory)")
    }

    deinit {
        stop()
        cluster?.stop()
    }

    /// Takes one write from the request's client (its bearer token when that is a configured one, else
    /// its address), or refuses it. An unknown bearer value counts against the address, so that made-up
    /// tokens cannot buy a client fresh buckets.
    private static func checkWriteRate(
        _ request: HTTPRequest, _ limiter: WriteRateLimiter, access: AccessControl,
        counters: ServerCounters
    ) throws(RequestError) {
        guard request.method != .get, request.method != .head, request.method != .options else { return }
        let token = AccessControl.bearer(request).flatMap { access.match($0) }
        let client = token.map { "token " + $0.secret } ?? "address " + (request.clientAddress ?? "?")
        guard let retryAfter = limiter.take(for: client) else { return }
        counters.rateLimitedWrites.add(1, ordering: .relaxed)
        throw .tooManyWrites(retryAfter: retryAfter, rate: limiter.rate, burst: limiter.burst)
    }

    private var daemonOptions: MicroHTTPDDaemon.Options {
        MicroHTTPDDaemon.Options(
            host: configuration.network.host, port: UInt16(clamping: configuration.network.port),
            connectionLimit: configuration.effectiveConnectionLimit,
            connectionsPerAddress: configuration.effectiveMaxConnectionsPerAddress,
            connectionMemoryLimit: configuration.network.connectionMemoryLimit,
            connectionTimeoutSeconds: configuration.effectiveConnectionTimeout,
            requestTimeout: configuration.network.requestTimeout,
            threadPoolSize: configuration.network.threadPoolSize,
            sendBufferSize: configuration.network.sendBufferSize, bodyLimit: configuration.limits.bodyLimit,
            serverHeader: LiveBindVersion.serverHeader)
    }

    private func makeHandlers(
        _ router: Router, access: AccessControl, limiter: WriteRateLimiter?,
        proxies: TrustedProxies
    ) -> MicroHTTPDDaemon.Handlers {
        let counters = counters
        let store = store
        let cluster = cluster
        let node = cluster?.configuration.nodeName
        let serial = requestSerial
        return MicroHTTPDDaemon.Handlers(
            respond: { received in
                var forwarded = received
                if !proxies.isEmpty { proxies.apply(to: &forwarded) }
                forwarded.serial = serial.next()
                let request = forwarded
                counters.add(request: request)
                var response: HTTPResponse
                let isWrite = request.method != .get && request.method != .head && request.method != .options
                do {
                    try access.checkHost(request)
                    if let limiter { try Self.checkWriteRate(request, limiter, access: access, counters: counters) }
                    if let preflight = access.preflight(request) {
                        response = preflight
                    } else if isWrite, let cluster, Self.changesModels(request) {
                        response = Self.answerInTurn(request, router: router, cluster: cluster, counters: counters)
                    } else {
                        response = try router.route(request)
                    }
                } catch {
                    counters.addError()
                    response = Problem.from(error).response
                }
                // The ticket of an `Idempotency-Key` is told the answer the client finally gets. Its
                // request's refusal was answered rather than thrown (a cluster turn counts its own).
                let settle = response.settle
                if settle != nil && cluster == nil && response.status >= 400 { counters.addError() }
                if isWrite && cluster == nil {
                    response = Self.answerOnceDurable(response, store: store, counters: counters)
                }
                access.finish(&response, for: request)
                if let node { response.headers.add(Self.nodeHeader, node) }
                if let deferred = response.deferred {
                    deferred.finishing { response in
                        access.finish(&response, for: request)
                        if let node { response.headers.add(Self.nodeHeader, node) }
                        if let settle = settle ?? response.settle { settle(response) }
                    }
                } else if let settle {
                    settle(response)
                }
                return response
            },
            reject: { request, failure in
                var request = request
                if !proxies.isEmpty { proxies.apply(to: &request) }
                counters.addError()
                var response = Problem.from(failure).response
                access.finish(&response, for: request)
                if let node { response.headers.add(Self.nodeHeader, node) }
                return response
            },
            redactLog: { AccessControl.redactingTokens($0) })
    }
}

/// Numbers the requests a server answers.
final class RequestSerial: Sendable {
    private let last = Atomic<UInt64>(0)

    func next() -> UInt64 {
        last.add(1, ordering: .relaxed).newValue
    }
}
