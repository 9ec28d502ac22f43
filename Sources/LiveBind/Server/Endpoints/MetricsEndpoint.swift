import LiveBindEngine
internal import LiveBindHTTP
/// `GET /metrics` in the Prometheus text exposition format.
enum MetricsEndpoint {
    static func render(
        hub: EventHubMetrics, counters: ServerCounters, models: Int, log: CommitWriter?,
        cluster: ClusterNode? = nil, idempotencyKeys: Int = 0
    ) -> HTTPResponse {
        var rows: [(name: String, type: String, help: String, value: Int)] = [
            ("livebind_open_streams", "gauge", "Event streams open now.", hub.openStreams),
            ("livebind_idempotency_keys", "gauge", "Idempotency-Key answers kept (at most --idempotency-keys).", idempotencyKeys),
            ("livebind_models", "gauge", "Models in the store.", models),
            ("livebind_retained_events", "gauge", "Events kept for Last-Event-ID resumes.", hub.retainedEvents),
            (
                "livebind_retained_bytes", "gauge", "Bytes of the retained events, shared by every stream (at most --retained-bytes).",
                hub.retainedBytes
            ),
            (
                "livebind_location_streams", "gauge", "Open event streams with sub values (locations and windows).",
                hub.locationStreams
            ),
            (
                "livebind_mirrored_models", "gauge", "Models the event hub keeps a copy of for location streams.",
                hub.mirroredModels
            ),
            (
                "livebind_snapshots_encoded_total", "counter", "Snapshot frames encoded for streams starting or starting over.",
                hub.snapshotsEncoded
            ),
            (
                "livebind_snapshots_shared_total", "counter",
                "Streams that started from a snapshot frame another stream at the same cut already had.",
                hub.snapshotsShared
            ),
            (
                "livebind_view_rows_arranged_total", "counter",
                "Array elements views arranged whole (a view opening, or its array replaced).", hub.viewRowsArranged
            ),
            (
                "livebind_view_rows_arranged_locked_total", "counter",
                "Of those, elements arranged while holding the event hub's lock (short arrays, and changes a view caught up with).",
                hub.viewRowsArrangedUnderLock
            ),
            ("livebind_events_published_total", "counter", "Commits encoded and published to streams.", hub.eventsPublished),
            ("livebind_stream_bytes_sent_total", "counter", "Bytes written to event streams.", hub.bytesSent),
            ("livebind_heartbeats_total", "counter", "Heartbeat comments sent to quiet streams.", hub.heartbeats),
            (
                "livebind_heartbeats_direct_total", "counter",
                "Heartbeats sent straight to the socket of a suspended stream, without waking it.",
                hub.directHeartbeats
            ),
            (
                "livebind_streams_auth_revoked_total", "counter",
                "Streams ended with auth_revoked: their token expired or their session ended.",
                hub.authRevoked
            ),
            ("livebind_streams_opened_total", "counter", "Event streams opened.", hub.streamsOpened),
            ("livebind_streams_rejected_total", "counter", "Event streams refused at the limit.", hub.rejectedStreams),
            ("livebind_resyncs_total", "counter", "Streams sent resync and fresh snapshots.", hub.resyncs),
            (
                "livebind_dropped_clients_total", "counter",
                "Streams that did not keep up: sent resync (lagging) or closed for not reading.",
                hub.laggingClients + counters.stalledStreamsClosed.load(ordering: .relaxed) + hub.bufferLimitCuts + hub.budgetCuts
                    + hub.silentPeerCuts
            ),
            (
                "livebind_lagging_resyncs_total", "counter", "Streams that fell behind the retained events and were sent resync.",
                hub.laggingClients
            ),
            (
                "livebind_stalled_streams_closed_total", "counter",
                "Streams closed by the idle timeout because the client stopped reading.",
                counters.stalledStreamsClosed.load(ordering: .relaxed)
            ),
            (
                "livebind_buffer_limit_streams_closed_total", "counter",
                "Streams closed because they held more than --stream-buffer-limit bytes unsent while their client read nothing.",
                hub.bufferLimitCuts
            ),
            (
                "livebind_silent_streams_closed_total", "counter",
                "Idle streams closed because their peer acknowledged nothing for a heartbeat interval (gone without closing).",
                hub.silentPeerCuts
            ),
            (
                "livebind_budget_streams_closed_total", "counter",
                "Streams whose clients read nothing closed to keep all streams' unsent bytes under --max-unsent-bytes.",
                hub.budgetCuts
            ),
            (
                "livebind_stream_unsent_bytes", "gauge",
                "Bytes of snapshots, replays and events the open streams hold unsent (each shared frame counted once), and of snapshots being made.",
                hub.unsentBytes
            ),
            (
                "livebind_slow_requests_closed_total", "counter",
                "Connections closed because the request did not arrive within the request timeout.",
                counters.slowRequestsClosed.load(ordering: .relaxed)
            ),
            ("livebind_http_requests_total", "counter", "HTTP requests answered.", counters.requests.load(ordering: .relaxed)),
            ("livebind_writes_total", "counter", "Successful writes.", counters.writes.load(ordering: .relaxed)),
            ("livebind_errors_total", "counter", "Requests answered with a problem.", counters.errors.load(ordering: .relaxed)),
            (
                "livebind_writes_rate_limited_total", "counter",
                "Writes refused with 429 because their client wrote faster than --write-rate.",
                counters.rateLimitedWrites.load(ordering: .relaxed)
            )
        ]
        if let log {
            rows += [
                (
                    "livebind_log_syncs_total", "counter",
                    "Transactions synced to the data directory (each makes a group of commits durable).",
                    log.syncs.load(ordering: .relaxed)
                ),
                (
                    "livebind_log_commits_total", "counter", "Commits made durable in the data directory.",
                    log.commits.load(ordering: .relaxed)
                ),
                (
                    "livebind_log_checkpoints_total", "counter", "Checkpoints written (the models changed since the last one, whole).",
                    log.checkpoints.load(ordering: .relaxed)
                )
            ]
        }
        if let cluster {
            let status = cluster.status
            rows += [
                (
                    "livebind_cluster_applied_sequence", "gauge", "The last event id of the cluster applied on this node.",
                    Int(clamping: status.applied)
                ),
                (
                    "livebind_cluster_lag", "gauge", "Messages of the cluster's stream not applied on this node yet.",
                    Int(clamping: status.lag)
                ),
                (
                    "livebind_cluster_connected", "gauge", "1 while this node is connected to NATS and takes writes, else 0.",
                    status.connected ? 1 : 0
                ),
                (
                    "livebind_cluster_conflicts_total", "counter",
                    "Writes run again because another node's commit took the sequence first.",
                    cluster.conflicts.load(ordering: .relaxed)
                ),
                (
                    "livebind_cluster_refused_writes_total", "counter", "Writes answered 503 because the stream did not answer in time.",
                    cluster.refusedWrites.load(ordering: .relaxed)
                ),
                (
                    "livebind_cluster_dropped_writes_total", "counter",
                    "Swift writes made outside a request that another node's commit pushed out of the stream and that could not be made again.",
                    cluster.droppedWrites.load(ordering: .relaxed)
                ),
                (
                    "livebind_cluster_snapshots_total", "counter", "Snapshots of every model this node published to the snapshot stream.",
                    cluster.snapshotsTaken.load(ordering: .relaxed)
                )
            ]
        }
        var text = ""
        for row in rows {
            text += "# HELP \(row.name) \(row.help)\n# TYPE \(row.name) \(row.type)\n\(row.name) \(row.value)\n"
        }
        return .text(text, contentType: "text/plain; version=0.0.4; charset=utf-8")
    }
}
