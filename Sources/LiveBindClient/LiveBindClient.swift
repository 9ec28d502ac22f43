import Foundation
@_exported import LiveBindEngine
import Synchronization

/// A connection to one LiveBind server: writes that are retried safely, an offline queue of writes,
/// and mirrors that keep models of a local `Store` equal to the server's.
///
/// ```swift
/// let client = try LiveBindClient(url: URL(string: "http://127.0.0.1:8080")!, token: nil,
///                             queueFile: URL(fileURLWithPath: "writes.jsonl"))
/// let store = Store()
/// let mirror = try client.mirror(["sensor", "orders/items"], into: store)
/// _ = await mirror.waitUntilSynced(timeout: .seconds(5))
/// try store.set(30, at: Path(pointer: "/threshold"), in: "sensor")   // also written to the server
/// ```
///
/// HTTP goes through libcurl (one thread for every transfer of the process): TLS with the system's
/// trust store, and the cookies the server sets kept and sent back.
public final class LiveBindClient: Sendable {
    /// The server's address (`http(s)://host:port`).
    public let url: URL
    /// How often a write whose answer was lost is sent again, with its `Idempotency-Key`.
    public let retries: Int
    let transport: HTTPTransport
    let queue: WriteQueue?
    private let refused = OrderedMutex<[RejectedWrite]>([])
    private let flushing = OrderedMutex(false)

    /// A client of the server at `url`. `token`: a bearer token or JWT sent with every request and
    /// stream. `queueFile`: where writes wait while the server cannot be reached (JSON lines), sent in
    /// order when it can; nil: such a write fails. `trustedCertificates`: a PEM file whose
    /// certificates `https` trusts instead of the system's (a private CA); throws when it cannot be read.
    public init(
        url: URL, token: String? = nil, queueFile: URL? = nil, retries: Int = 3,
        trustedCertificates: URL? = nil
    ) throws(LiveBindClientError) {
        self.url = url
        self.retries = max(0, retries)
        if let trustedCertificates {
            let pem = (try? String(contentsOf: trustedCertificates, encoding: .utf8)) ?? ""
            guard pem.contains("-----BEGIN CERTIFICATE-----") else {
                throw .invalidTarget("cannot read the certificates in \(trustedCertificates.path): no PEM certificate there")
            }
        }
        transport = HTTPTransport(base: url, token: token, caFile: trustedCertificates?.path)
        queue = queueFile.map(WriteQueue.init(file:))
    }

    /// Mirrors `targets` (models, locations, windows, views) into `store`, starting at once: see
    /// ``ServerMirror``; keep it, and `close()` it when done. `heartbeat` is the server's `--heartbeat`: a
    /// stream silent for two of them is made again. `maxEventBytes` bounds one event's data (a
    /// snapshot is as large as its model: the server's `--max-model-size`, 16 MiB, by default) and a
    /// group of events 4 times that; a stream past it is dropped as not a LiveBind server's.
    /// `onRefusal` hears writes made in `store` that the server refused (rolled back by then).
    public func mirror(
        _ targets: [MirrorTarget], into store: Store, heartbeat: Duration = .seconds(15),
        maxEventBytes: Int = 64 << 20, onRefusal: (@Sendable (LiveBindClientError) -> Void)? = nil
    ) throws(LiveBindClientError) -> ServerMirror {
        let mirror = try ServerMirror(
            client: self, targets: targets, store: store, heartbeat: heartbeat,
            maxEventBytes: maxEventBytes, onRefusal: onRefusal)
        mirrors.withLock { list in
            list.removeAll { $0.mirror == nil }
            list.append(WeakMirror(mirror: mirror))
        }
        return mirror
    }

    // MARK: Writes

    /// Sends a write (`PUT`, `POST`, `PATCH`, `DELETE` to `path`, such as `/models/sensor/t`) and
    /// returns the server's answer (`{"id","rev"[,"index"]}`). It goes with an `Idempotency-Key`
    /// (`key`, else a new one) and, when its answer is lost (no connection, 502, 503, 504, or 409
    /// with `Retry-After`), is sent again with it up to ``retries`` times: the server applies it once.
    public func write(
        _ method: String, _ path: String, body: JSON? = nil, contentType: String = "application/json",
        ifMatch: UInt64? = nil, key: String? = nil
    ) async throws(LiveBindClientError) -> JSON {
        let key = key ?? UUID().uuidString.lowercased()
        var headers = ["Idempotency-Key": key]
        if let ifMatch { headers["If-Match"] = "\"\(ifMatch)\"" }
        if body != nil { headers["Content-Type"] = contentType }
        let request = transport.request(method, path, headers: headers)
        let data = body.map { $0.encoded() }
        var attempt = 0
        while true {
            var wait: Double?
            let failure: LiveBindClientError
            do {
                let answer = try await transport.send(request, body: data)
                if [502, 503, 504].contains(answer.status) || (answer.status == 409 && answer.retryAfter != nil) {
                    // The write may be running or may have run: unknown until a retry gets its answer.
                    wait = answer.retryAfter
                    failure = .unreachable("the server answered \(answer.status) (\(LiveBindClientError.refusal(answer)))")
                } else if answer.status < 300 {
                    return answer.json ?? .object([:])
                } else {
                    throw LiveBindClientError.refusal(answer)
                }
            } catch let error as LiveBindClientError {
                throw error
            } catch {
                failure = .unreachable(String(describing: error))
            }
            guard attempt < retries else { throw failure }
            let backoff = min(wait ?? 0.25 * Double(1 << min(attempt, 6)), 5) * Double.random(in: 0.75...1.25)
            try? await Task.sleep(for: .seconds(backoff))
            attempt += 1
        }
    }

    // MARK: The offline queue

    /// The writes waiting in the queue file, oldest first (none without a queue file, or when it
    /// cannot be read).
    public func queuedWrites() -> [QueuedWrite] {
        (try? queue?.withEntries { $0 }) ?? []
    }

    /// Queued writes the server refused for good (400, 404, 409, 412, 422), with its answer: taken
    /// out of the queue, left for the application to decide.
    public var rejectedWrites: [RejectedWrite] { refused.withLock { $0 } }

    /// Keeps a write for later, behind the ones waiting; returns its key.
    @discardableResult
    public func enqueue(
        _ method: String, _ path: String, body: JSON? = nil, ifMatch: UInt64? = nil,
        key: String? = nil, contentType: String? = nil
    ) throws(LiveBindClientError) -> String {
        guard let queue else { throw .invalidTarget("this client has no queue file") }
        let entry = QueuedWrite(
            key: key ?? UUID().uuidString.lowercased(), method: method, path: path, body: body,
            ifMatch: ifMatch, contentType: contentType)
        do {
            try queue.withEntries { $0.append(entry) }
        } catch {
            throw .unreachable("the server cannot be reached and the queue cannot keep the write: \(error)")
        }
        return entry.key
    }

    /// Sends the queued writes in order, each with its key. Stops at the first that cannot reach the
    /// server or that the server cannot take now (401, 403, 408, 425, 429, 5xx: it stays first); one
    /// refused for good (any other 4xx) goes to ``rejectedWrites``. Returns how many left the queue.
    /// The client's mirrors hear each answer (a write of theirs settles, or rolls back).
    @discardableResult
    public func flushQueue() async -> Int {
        guard let queue,
            flushing.withLock({ busy in
                defer { busy = true }; return !busy
            })
        else { return 0 }
        defer { flushing.withLock { $0 = false } }
        var sent = 0
        while let entry = try? queue.withEntries({ $0.first }) {
            let outcome: Result<JSON, LiveBindClientError>
            do {
                outcome = .success(
                    try await write(
                        entry.method, entry.path, body: entry.body,
                        contentType: entry.contentType ?? "application/json",
                        ifMatch: entry.ifMatch, key: entry.key))
            } catch {
                guard let status = error.status, Self.refusedForGood(status) else { break }
                outcome = .failure(error)
                refused.withLock { $0.append(RejectedWrite(write: entry, error: error)) }
            }
            guard (try? queue.withEntries({ entries in entries.removeAll { $0.key == entry.key } })) != nil else { break }
            for mirror in mirrors.withLock({ $0.compactMap(\.mirror) }) { _ = mirror.answered(key: entry.key, outcome) }
            sent += 1
        }
        return sent
    }

    /// Whether a refusal means the write will never apply as it is (a queued write so refused is set
    /// aside), rather than not now (a credential to renew, a busy or failing server).
    static func refusedForGood(_ status: Int) -> Bool {
        (400..<500).contains(status) && ![401, 403, 408, 425, 429].contains(status)
    }

    /// Whether writes wait in the queue file (or it cannot be read: then nothing is sent past it).
    var hasQueuedWrites: Bool {
        guard let queue else { return false }
        return (try? queue.withEntries { !$0.isEmpty }) ?? true
    }

    /// The client's mirrors, which hear the answers to queued writes whoever sends them.
    let mirrors = OrderedMutex<[WeakMirror]>([])

    struct WeakMirror: Sendable {
        weak var mirror: ServerMirror?
    }
}

/// A queued write the server refused, and its refusal.
public struct RejectedWrite: Sendable {
    /// The write as it was queued.
    public var write: QueuedWrite
    /// The server's refusal (its status and problem).
    public var error: LiveBindClientError
}
