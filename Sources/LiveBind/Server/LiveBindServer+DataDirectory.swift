import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif
import LiveBindEngine

extension LiveBindServer {
    /// Makes a stopped server with its own store and bindings: loaded from `configuration.persistence.dataDirectory`
    /// when set (every later write is on disk before it is answered or streamed), else empty and in memory.
    ///
    /// In memory, event ids start from the clock (microseconds since 1970) rather than from 1, so they
    /// keep growing across restarts: a client that comes back with a `Last-Event-ID` from before a
    /// restart gets `resync` and fresh snapshots, never the new server's events as if they followed
    /// its old ones. (That holds while the server commits fewer than a million changes per second of
    /// its uptime.)
    ///
    /// ```swift
    /// var configuration = LiveBindServer.Configuration()
    /// configuration.persistence.dataDirectory = "/var/lib/livebind"
    /// let server = try LiveBindServer(configuration: configuration)   // models as they were at exit
    /// try server.start()                                              // bindings made over HTTP are back
    /// ```
    /// Throws ``ServerError/dataDirectoryUnusable(_:)`` when the directory cannot be created, the file is
    /// not a LiveBind database, or another server uses it. The file stays locked until ``stop()``.
    public convenience init(configuration: Configuration, logger: Logger = Logger(label: "livebind.server")) throws(ServerError) {
        if let cluster = configuration.cluster {
            // A node's models are the stream's; its data directory, when given, holds its history only.
            let history = try Self.openHistory(configuration, logger: logger)
            let node: ClusterNode
            let snapshot: ClusterSnapshot
            do throws(ClusterError) {
                node = try ClusterNode(configuration: cluster, logger: logger)
                snapshot = try node.loadSnapshot()
            } catch {
                throw .clusterUnavailable(error.description)
            }
            // Event ids go on from the last snapshot's: the store starts from it and replays the stream
            // after it now, so that definition files and the app see the cluster's models before the
            // server starts.
            let store = Store(
                restoring: snapshot.models, lastSequence: snapshot.events, log: node,
                limits: configuration.limits.store)
            self.init(
                store: store, bindings: nil, configuration: configuration, logger: logger, database: nil, cluster: node,
                history: history)
            // Answers to idempotent writes: from the snapshot, then from every commit the node applies.
            learnInOrder(receipts: snapshot.receipts, answers: snapshot.answers.compactMap(AnswerReceipt.init(json:)))
            node.receiptHandler.withLock { [idempotency] in $0 = { idempotency.learn($0) } }
            node.receiptSource.withLock { [idempotency] in
                $0 = { events, sequence in
                    let receipts = idempotency.receipts(through: events, sequence: sequence)
                    return (receipts.commits, receipts.answers.map(\.json))
                }
            }
            // Bindings made over HTTP on any node reach this one through the stream (without catching
            // up: the node that made the change logged what catching up derived), with the answer to a
            // retry of the request that made them.
            node.setBindingHandler { [weak registry = bindings, logger, idempotency] change, tag, sequence in
                guard let registry else { return }
                do throws(BindingError) {
                    let response = try BindingsResource.replay(change, into: registry)
                    if let receipt = AnswerReceipt(tag: tag, response: response, sequence: sequence) { idempotency.learn(receipt) }
                } catch {
                    logger.warning("cluster: binding change \(change.id) from the stream does not apply here: \(error)")
                }
            }
            // Bindings whose derived commits another node's commit pushed out of the stream catch up
            // on this node, the one that made the write.
            node.setCatchUpHandler { [weak registry = bindings] commits in registry?.catchUp(after: commits) }
            do throws(ClusterError) {
                try node.start()
            } catch {
                node.stop()
                throw .clusterUnavailable(error.description)
            }
            return
        }
        guard let directory = configuration.persistence.dataDirectory else {
            self.init(
                store: Store(startingSequence: Self.clockSequence(), limits: configuration.limits.store), bindings: nil,
                configuration: configuration,
                logger: logger, database: nil)
            return
        }
        let database: StateDatabase
        let contents: StateDatabase.Contents
        do {
            database = try StateDatabase(
                directory: directory, retainedEvents: configuration.streams.retainedEvents,
                checkpointBytes: configuration.persistence.checkpointBytes,
                receipts: .init(
                    window: configuration.limits.idempotencyWindow,
                    capacity: configuration.limits.idempotencyKeys),
                beforeSync: configuration.beforeLogSync)
            contents = try database.load()
        } catch {
            throw .dataDirectoryUnusable(error.description)
        }
        let store = Store(
            restoring: contents.models, lastSequence: contents.lastSequence, log: database,
            limits: configuration.limits.store)
        let history = try Self.openHistory(configuration, logger: logger)
        self.init(
            store: store, bindings: nil, configuration: configuration, logger: logger, database: database,
            history: history, roomsOpenSince: contents.roomsOpenSince)
        let window = configuration.limits.idempotencyWindow.components.seconds
        let since = Date().timeIntervalSince1970 - Double(window)
        learnInOrder(
            receipts: database.receipts(since: since), answers: database.answers(since: since).compactMap(AnswerReceipt.init(json:)))
    }

    /// Learns the receipts of a data directory or a snapshot in the order their requests came, commits' and kept
    /// answers' together: the table then drops what it dropped before the restart (each credential's
    /// own oldest past its share), not whichever kind it happened to learn first.
    private func learnInOrder(receipts: [CommitReceipt], answers: [AnswerReceipt]) {
        enum Learned {
            case commit(CommitReceipt)
            case answer(AnswerReceipt)
        }
        func created(_ tag: String) -> Double { IdempotencyTicket.parse(tag: tag)?.created.timeIntervalSince1970 ?? 0 }
        var all =
            receipts.map { (created: created($0.tag), receipt: Learned.commit($0)) }
            + answers.map { (created: created($0.tag), receipt: Learned.answer($0)) }
        all = all.enumerated().sorted { ($0.element.created, $0.offset) < ($1.element.created, $1.offset) }.map(\.element)
        for item in all {
            switch item.receipt {
            case .commit(let receipt): idempotency.learn(receipt)
            case .answer(let receipt): idempotency.learn(receipt)
            }
        }
    }

    /// The data directory's history (`--history`), nil without a data directory or with `--history 0`.
    private static func openHistory(_ configuration: Configuration, logger: Logger) throws(ServerError) -> HistoryDatabase? {
        guard let directory = configuration.persistence.dataDirectory,
            let retention = HistoryRetention(parsing: configuration.persistence.history), retention.isOn
        else { return nil }
        do {
            try DataDirectory.prepare(directory)
            return try HistoryDatabase(
                directory: directory, retention: retention,
                checkpointBytes: configuration.persistence.checkpointBytes, logger: logger)
        } catch {
            throw .dataDirectoryUnusable(error.description)
        }
    }

    /// Microseconds since 1970: the first event id of a server that keeps no history.
    static func clockSequence() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1_000)
    }

    /// Re-creates the bindings made over HTTP and applies the enabled flags set over HTTP, once, after the
    /// bindings of the definition files and the app exist. A binding that cannot be made any more is
    /// logged and skipped (its row stays, so a later version can make it again).
    func restoreBindings() {
        guard let database,
            bindingsRestored.withLock({ done in
                defer { done = true }; return !done
            })
        else { return }
        let (created, enabled) = database.bindings()
        let flags = Dictionary(enabled.map { ($0.id, $0.enabled) }, uniquingKeysWith: { _, last in last })
        for stored in created where bindings.binding(id: stored.id) == nil {
            // Made disabled, then enabled unless it was disabled: a disabled binding must not catch up.
            var issues: [BindingIssue] = []
            do {
                let prepared = try bindings.prepare(try BindingSpec(json: stored.definition))
                if let binding = bindings.insertDisabled([(prepared, stored.id)], issues: &issues).first,
                    flags[stored.id] ?? true
                {
                    bindings.setEnabled(binding, true)
                }
            } catch {
                issues.append(BindingIssue(position: stored.id, reason: error.description))
            }
            if !issues.isEmpty {
                logger.warning("binding '\(stored.id)' from the data directory could not be made again: \(issues)")
            }
        }
        for (id, isEnabled) in enabled where bindings.binding(id: id) != nil {
            try? bindings.setEnabled(id: id, isEnabled)
        }
    }

    /// Says at start where the state lives.
    func logStateLocation() {
        if let cluster {
            let settings = cluster.configuration
            logger.info(
                "cluster node \(settings.nodeName): state in the JetStream stream \(settings.stream) (\(settings.replicas) replicas), event ids the same on every node; writes are answered once in the stream"
            )
        } else if let database {
            logger.info(
                """
                data directory \(database.directory): \(store.modelNames().count) models, \
                \(bindings.all.count) bindings, event ids continue after \(store.lastSequence); \
                writes are answered once on disk
                """)
        } else {
            logger.info("state is in memory: models, bindings and events are lost at exit (--data DIR keeps them)")
        }
    }

    /// Gives the hub the log's newest commits, read once, for `Last-Event-ID` resumes, and the history
    /// what a crash left unwritten; then returns to the system the pages that loading freed.
    func catchUp(_ hub: EventHub) {
        do {
            var frames: [UInt64: EventFrame] = [:]
            let recent =
                database.map { database in
                    let store = store
                    let commits = database.recentCommits(
                        bytes: configuration.streams.retainedBytes,
                        size: { commit in
                            let frame = EventEncoder.frame(for: commit)
                            frames[commit.sequence] = frame
                            return frame.bytes.count
                        },
                        wantedAfter: history?.lastRecorded
                    ) { model, revision in
                        store.visibleSnapshot(models: [model]).models.first { $0.revision == revision }?.value
                    }
                    // Every commit after the newest logged one is a presence room's (EphemeralModels),
                    // which a resume does not need: the log covers the store's last event.
                    return (commits: commits, through: UInt64?.some(store.visibleSequence))
                }
                ?? cluster.map { node in
                    let read = node.recentCommits(limit: configuration.streams.retainedEvents)
                    return (read.commits, UInt64?.some(read.through))
                }
            if let history { logger.info("\(history.start(with: store, recent: recent?.commits ?? []))") }
            if let recent {
                let seeded = recent.commits.map { frames[$0.sequence] ?? EventEncoder.frame(for: $0) }
                hub.seed(history: seeded, through: recent.through)
            }
        }
        // Loading the models and these commits parsed them all, and what they freed stays in the heap
        // unless it is given back: a restarted server held 1.7 times what the one that wrote the state held.
        ProcessMemory.returnFreePages()
    }
}
