import DequeModule
import Foundation
import LiveBindEngine
internal import LiveBindHTTP

/// The answers to writes sent with `Idempotency-Key`, by key, for ``window`` (at most ``capacity``
/// keys): a retry with the same key and the same request gets the first answer again, without writing
/// again (docs/HTTP.md, "Idempotent writes").
///
/// A write that committed leaves a receipt in the commit log (``IdempotencyTicket/tag``, carried by
/// its commit: SQLite's `receipts` table in the same transaction, the cluster's stream in the same
/// message), from which every node (and a restarted one) learns its answer: the answer holds wherever
/// the log does; a `/bindings` write keeps its answer with its change (``AnswerReceipt``). A write
/// that committed nothing (a refusal, an equal value) keeps its answer in a data directory as an
/// ``AnswerReceipt`` too (`IdempotentWrites`); on a cluster node it is answered again only by the node
/// that answered it, until it restarts.
///
/// Past ``capacity`` the oldest finished answer goes first, but a credential holding more than an
/// eighth of the table loses its own oldest instead, so one client cannot push everyone else's keys
/// out; a request still running keeps its key. A data directory trims its receipts by the same rule
/// (`StateDatabase.trimFairly`), so a restart learns the answers this table held.
final class IdempotencyTable: Sendable {
    /// A stored answer: what the first request got.
    struct Answer: Sendable {
        var status: Int
        var body: [UInt8]
        var headers: [(String, String)]

        init(status: Int, body: [UInt8], headers: [(String, String)]) {
            self.status = status
            self.body = body
            self.headers = headers
        }

        /// What of `response` is given again: nil when another try would not get the same (a 5xx, a
        /// 429, an answer that is no bytes).
        init?(_ response: HTTPResponse) {
            guard response.status < 500 && response.status != 429, case .bytes(let body) = response.body else { return nil }
            let names = ["Content-Type", "ETag", ModelEndpoint.eventIDHeader, "Location", "Retry-After"]
            self.init(
                status: response.status, body: body,
                headers: names.compactMap { name in response.headers[name].map { (name, $0) } })
        }
    }

    private enum State {
        /// A request with this key is running (`owner`: its serial; a cluster runs it again after a lost race).
        case running(owner: UInt64)
        /// Answered; `receipt`: what the log keeps of it, when it came from there.
        case done(Answer, receipt: Receipt?)
    }

    private enum Receipt {
        case commit(CommitReceipt)
        case answer(AnswerReceipt)
    }

    private struct Entry {
        var fingerprint: String
        var state: State
        var created: Date
        var isRunning: Bool { if case .running = state { true } else { false } }
        /// What its answer holds in memory, about (its body, and a little for the rest).
        var bytes: Int { if case .done(let answer, _) = state { answer.body.count + 128 } else { 0 } }
    }

    /// Keys in the order their entries were made, with when (an entry made again is told apart by its date).
    private typealias Order = Deque<(key: String, created: Date)>

    private struct Table {
        var entries: [String: Entry] = [:]
        var order = Order()
        var byScope: [Substring: Order] = [:]
        /// How many entries each credential holds.
        var held: [Substring: Int] = [:]
        /// What the answers hold, about (``Entry/bytes``).
        var bytes = 0

        /// Puts `entry` at `key`; true when the key was new.
        mutating func put(_ key: String, _ entry: Entry) -> Bool {
            let old = entries.updateValue(entry, forKey: key)
            bytes += entry.bytes - (old?.bytes ?? 0)
            return old == nil
        }

        mutating func setState(_ key: String, _ state: State) {
            guard var entry = entries[key] else { return }
            bytes -= entry.bytes
            entry.state = state
            bytes += entry.bytes
            entries[key] = entry
        }

        mutating func remove(_ key: String) {
            guard let entry = entries.removeValue(forKey: key) else { return }
            bytes -= entry.bytes
            let scope = IdempotencyTable.scope(of: key)
            held[scope] = held[scope, default: 1] > 1 ? held[scope, default: 1] - 1 : nil
        }
    }

    /// Most bytes the answers may hold together (a `/bindings` answer is the binding's description,
    /// up to the body limit): past it the oldest finished answers go first.
    static let maxAnswerBytes = 64 << 20

    let window: Duration
    let capacity: Int
    /// How many keys one credential may hold before its own oldest go first.
    let fairShare: Int
    /// How long a running request holds its key before another may take it (it got lost).
    static let abandonedAfter: TimeInterval = 600
    private let table = OrderedMutex(Table())

    init(window: Duration, capacity: Int) {
        self.window = window
        self.capacity = max(1, capacity)
        fairShare = max(1, capacity / 8)
    }

    private var windowSeconds: TimeInterval {
        TimeInterval(window.components.seconds) + TimeInterval(window.components.attoseconds) / 1e18
    }

    /// Whether the request `ticket` names runs (nil: its key is now held by it), or gets the first
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
                    if owner == ticket.owner { return nil }
                    if now.timeIntervalSince(entry.created) < Self.abandonedAfter { throw .inUse(key: ticket.displayKey) }
                }
            }
            insert(&table, ticket.key, Entry(fingerprint: ticket.fingerprint, state: .running(owner: ticket.owner), created: now))
            return nil
        }
    }

    /// Records what the request of `ticket` was finally answered: kept when another try would get the
    /// same (not a 5xx, not a 429), else the key is free again.
    func settle(_ ticket: IdempotencyTicket, _ response: HTTPResponse) {
        let answer = Answer(response)
        table.withLock { table in
            guard let entry = table.entries[ticket.key], case .running(let owner) = entry.state, owner == ticket.owner else { return }
            if let answer {
                table.setState(ticket.key, .done(answer, receipt: nil))
                trimBytes(&table)
            } else {
                table.remove(ticket.key)
            }
        }
    }

    /// Learns the answer of a write from its receipt in the commit log (made here or on another node).
    /// A running request with the same key then gets it when it runs again.
    func learn(_ receipt: CommitReceipt, now: Date = Date()) {
        guard let parsed = IdempotencyTicket.parse(tag: receipt.tag) else { return }
        learn(parsed, ModelEndpoint.answer(receipt, flags: parsed.flags), .commit(receipt), now: now)
    }

    /// Learns the answer of a `/bindings` write from its receipt (made here or on another node); a
    /// running request with the same key (this one's, too) then has its answer.
    func learn(_ receipt: AnswerReceipt, now: Date = Date()) {
        guard let parsed = IdempotencyTicket.parse(tag: receipt.tag) else { return }
        learn(parsed, receipt.answer, .answer(receipt), now: now)
    }

    private func learn(
        _ parsed: (fingerprint: String, flags: String, created: Date, key: String), _ answer: Answer,
        _ receipt: Receipt, now: Date
    ) {
        guard now.timeIntervalSince(parsed.created) < windowSeconds else { return }
        table.withLock { table in
            if let entry = table.entries[parsed.key], !entry.isRunning, entry.fingerprint == parsed.fingerprint {
                table.setState(parsed.key, .done(answer, receipt: receipt))
                trimBytes(&table)
                return
            }
            insert(
                &table, parsed.key,
                Entry(
                    fingerprint: parsed.fingerprint, state: .done(answer, receipt: receipt),
                    created: parsed.created))
        }
    }

    /// The receipts of the answers it holds that came from the commit log, oldest first (for a
    /// cluster snapshot): those of commits through event id `events`, and those of `/bindings`
    /// changes through the stream's message `sequence`.
    func receipts(through events: UInt64, sequence: UInt64) -> (commits: [CommitReceipt], answers: [AnswerReceipt]) {
        table.withLock { table in
            var commits: [CommitReceipt] = []
            var answers: [AnswerReceipt] = []
            for item in table.order {
                guard let entry = table.entries[item.key], entry.created == item.created,
                    case .done(_, let receipt?) = entry.state
                else { continue }
                switch receipt {
                case .commit(let commit) where commit.sequence <= events: commits.append(commit)
                case .answer(let answer) where answer.sequence <= sequence: answers.append(answer)
                default: break
                }
            }
            return (commits, answers)
        }
    }

    /// How many keys it holds (for tests and `/metrics`).
    var count: Int { table.withLock { $0.entries.count } }

    fileprivate static func scope(of key: String) -> Substring {
        key.prefix { $0 != ":" }
    }

    private func insert(_ table: inout Table, _ key: String, _ entry: Entry) {
        let scope = Self.scope(of: key)
        if table.put(key, entry) { table.held[scope, default: 0] += 1 }
        table.order.append((key, entry.created))
        table.byScope[scope, default: []].append((key, entry.created))
        if table.entries.count > capacity {
            // The credential's own oldest when it holds more than its share, else the table's oldest.
            if table.held[scope, default: 0] > fairShare {
                var own = table.byScope.removeValue(forKey: scope) ?? []
                Self.evictOldest(&own, &table)
                table.byScope[scope] = own
            } else {
                var order = table.order
                table.order = []
                Self.evictOldest(&order, &table)
                table.order = order
            }
        }
        trimBytes(&table)
        compact(&table)
    }

    /// Drops the oldest finished answers while the answers hold more than ``maxAnswerBytes``.
    private func trimBytes(_ table: inout Table) {
        while table.bytes > Self.maxAnswerBytes, !table.order.isEmpty {
            let before = table.entries.count
            var order = table.order
            table.order = []
            Self.evictOldest(&order, &table)
            table.order = order
            if table.entries.count == before { return }  // only running requests are left
        }
    }

    /// Drops the oldest finished entry `order` names (running ones stay, moved to the back).
    private static func evictOldest(_ order: inout Order, _ table: inout Table) {
        for _ in 0..<order.count {
            guard let oldest = order.popFirst() else { return }
            guard let entry = table.entries[oldest.key], entry.created == oldest.created else { continue }
            if entry.isRunning {
                order.append(oldest)
                continue
            }
            table.remove(oldest.key)
            return
        }
    }

    /// Keeps the orders from growing past twice the entries: what was dropped or made again leaves
    /// items behind.
    private func compact(_ table: inout Table) {
        guard table.order.count > 2 * table.entries.count + 64 else { return }
        let entries = table.entries
        table.order = table.order.filter { entries[$0.key]?.created == $0.created }
        var scopes: [Substring: Order] = [:]
        for item in table.order { scopes[Self.scope(of: item.key), default: []].append(item) }
        table.byScope = scopes
    }

    private func expire(_ table: inout Table, now: Date, window: TimeInterval) {
        while let first = table.order.first, now.timeIntervalSince(first.created) >= window {
            table.order.removeFirst()
            if table.entries[first.key]?.created == first.created { table.remove(first.key) }
        }
    }
}
