import Collections
import Foundation

/// The answers to writes sent with `Idempotency-Key`, by key, for ``window`` (at most ``capacity``
/// keys, the oldest forgotten first): a retry with the same key and the same request gets the first
/// answer again, without writing again (docs/HTTP.md, "Idempotent writes").
///
/// A write that committed leaves a receipt in the commit log (``IdempotencyTicket/tag``, carried by
/// its commit: SQLite's `receipts` table in the same transaction, the cluster's stream in the same
/// message), from which every node (and a restarted one) learns its answer: the answer holds wherever
/// the log does. A write that committed nothing (a refusal, an equal value) is answered again only by
/// the node that answered it, until it restarts.
final class IdempotencyTable: Sendable {
    /// A stored answer: what the first request got.
    struct Answer: Sendable {
        var status: Int
        var body: [UInt8]
        var headers: [(String, String)]
    }

    private enum State {
        /// A request with this key is running (`owner`: its serial; a cluster runs it again after a lost race).
        case running(owner: UInt64)
        case done(Answer, receipt: CommitReceipt?)
    }

    private struct Entry {
        var fingerprint: String
        var state: State
        var created: Date
    }

    private struct Table {
        var entries: [String: Entry] = [:]
        /// Keys in the order their entries were made, with when (an entry made again is found by its date).
        var order: Deque<(key: String, created: Date)> = []
    }

    let window: Duration
    let capacity: Int
    /// How long a running request holds its key before another may take it (it got lost).
    static let abandonedAfter: TimeInterval = 600
    private let table = OrderedMutex(Table())

    init(window: Duration, capacity: Int) {
        self.window = window
        self.capacity = max(1, capacity)
    }

    private var windowSeconds: TimeInterval {
        TimeInterval(window.components.seconds) + TimeInterval(window.components.attoseconds) / 1e18
    }

    /// Whether the request `ticket` names runs (true: its key is now held by it), or gets the first
    /// answer again (returned); throws when the key was used for another request (422) or one with it
    /// is running (409).
    func begin(_ ticket: IdempotencyTicket, now: Date = Date()) throws(IdempotencyError) -> Answer? {
        let window = windowSeconds
        return try table.withLock { (table) throws(IdempotencyError) -> Answer? in
            expire(&table, now: now, window: window)
            if let entry = table.entries[ticket.key] {
                guard entry.fingerprint == ticket.fingerprint else { throw .reused(key: ticket.displayKey) }
                switch entry.state {
                case .done(let answer, _):
                    return answer
                case .running(let owner):
                    if owner != ticket.owner && now.timeIntervalSince(entry.created) < Self.abandonedAfter {
                        throw .inUse(key: ticket.displayKey)
                    }
                }
            }
            insert(&table, ticket.key, Entry(fingerprint: ticket.fingerprint, state: .running(owner: ticket.owner), created: now))
            return nil
        }
    }

    /// Records what the request of `ticket` was finally answered: kept when another try would get the
    /// same (not a 5xx, not a 429), else the key is free again.
    func settle(_ ticket: IdempotencyTicket, _ response: HTTPResponse, now: Date = Date()) {
        let keep = response.status < 500 && response.status != 429
        var answer: Answer?
        if keep, case .bytes(let body) = response.body {
            let names = ["Content-Type", "ETag", ModelEndpoint.eventIDHeader, "Location", "Retry-After"]
            answer = Answer(status: response.status, body: body,
                            headers: names.compactMap { name in response.headers[name].map { (name, $0) } })
        }
        table.withLock { table in
            guard let entry = table.entries[ticket.key], case .running(let owner) = entry.state, owner == ticket.owner else { return }
            if let answer {
                table.entries[ticket.key]?.state = .done(answer, receipt: nil)
            } else {
                table.entries[ticket.key] = nil
            }
        }
    }

    /// Learns the answer of a write from its receipt in the commit log (made here or on another node).
    /// A running request with the same key then gets it when it runs again.
    func learn(_ receipt: CommitReceipt) {
        guard let parsed = IdempotencyTicket.parse(tag: receipt.tag) else { return }
        let created = Date(timeIntervalSince1970: receipt.created)
        let window = windowSeconds
        guard Date().timeIntervalSince(created) < window else { return }
        let answer = ModelEndpoint.answer(receipt, flags: parsed.flags)
        table.withLock { table in
            if let entry = table.entries[parsed.key], case .done = entry.state, entry.fingerprint == parsed.fingerprint {
                table.entries[parsed.key]?.state = .done(answer, receipt: receipt)
                return
            }
            insert(&table, parsed.key, Entry(fingerprint: parsed.fingerprint, state: .done(answer, receipt: receipt), created: created))
        }
    }

    /// The receipts of the answers it holds that came from the commit log, oldest first (for a
    /// cluster snapshot), through event id `sequence`.
    func receipts(through sequence: UInt64) -> [CommitReceipt] {
        table.withLock { table in
            table.order.compactMap { item -> CommitReceipt? in
                guard let entry = table.entries[item.key], entry.created == item.created,
                      case .done(_, let receipt?) = entry.state, receipt.sequence <= sequence else { return nil }
                return receipt
            }
        }
    }

    /// How many keys it holds (for `/metrics`).
    var count: Int { table.withLock { $0.entries.count } }

    private func insert(_ table: inout Table, _ key: String, _ entry: Entry) {
        table.entries[key] = entry
        table.order.append((key, entry.created))
        while table.entries.count > capacity, let oldest = table.order.popFirst() {
            if table.entries[oldest.key]?.created == oldest.created { table.entries[oldest.key] = nil }
        }
        // Entries made again leave their old place behind: drop those from the front.
        while let first = table.order.first, table.entries[first.key]?.created != first.created { table.order.removeFirst() }
    }

    private func expire(_ table: inout Table, now: Date, window: TimeInterval) {
        while let first = table.order.first, now.timeIntervalSince(first.created) >= window {
            table.order.removeFirst()
            if table.entries[first.key]?.created == first.created { table.entries[first.key] = nil }
        }
    }
}
