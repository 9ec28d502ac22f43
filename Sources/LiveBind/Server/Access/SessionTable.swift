import Crypto
import Foundation
import OrderedCollections
import Synchronization
import LiveBindEngine
internal import LiveBindHTTP

/// The live cookie sessions: what each may do (its token's scopes and prefixes) and until when.
///
/// Sessions are kept under the SHA-256 of their id, so that looking one up compares digests, never
/// the secret itself: how long a lookup takes tells nothing about how much of a guessed id was right.
///
/// No credential can take the table from the others. Each credential (its `Holder`: a JWT's subject,
/// else the token) holds at most `perCredential` sessions: a new one past that ends its own oldest.
/// The table holds at most `capacity`: a new session past it drops the expired ones, then the
/// requesting credential's own oldest; when every session left is live and another credential's, the
/// new one is refused (503) rather than ending someone else's.
///
/// > Important: called on libmicrohttpd worker threads; every method takes one short lock.
final class SessionTable: Sendable {
    /// A session's key in the table (and on the streams it opened): the digest of its id.
    typealias Key = SHA256Digest
    /// Whose a session is: the digest of the credential's subject or token, never the token itself.
    typealias Holder = SHA256Digest

    private struct Entry {
        let credential: AccessControl.Credential
        let holder: Holder
        let expiresAt: Date
    }

    private struct State {
        var entries: OrderedDictionary<Key, Entry> = [:]
        /// Each holder's sessions, oldest first.
        var byHolder: [Holder: [Key]] = [:]

        mutating func insert(_ entry: Entry, at key: Key) {
            entries[key] = entry
            byHolder[entry.holder, default: []].append(key)
        }

        @discardableResult
        mutating func remove(_ key: Key) -> Entry? {
            guard let entry = entries.removeValue(forKey: key) else { return nil }
            var keys = byHolder[entry.holder] ?? []
            keys.removeAll { $0 == key }
            byHolder[entry.holder] = keys.isEmpty ? nil : keys
            return entry
        }

        /// Drops the sessions that ended by `now` among `keys` (every session when nil); returns their keys.
        mutating func removeExpired(among keys: [Key]? = nil, now: Date) -> [Key] {
            let expired = (keys ?? Array(entries.keys)).filter { entries[$0].map { $0.expiresAt <= now } ?? false }
            for key in expired { remove(key) }
            return expired
        }
    }

    let capacity: Int
    let perCredential: Int
    let lifetime: Duration
    /// Longest `Retry-After` of a refusal: sessions also end early (`DELETE /session`), unannounced.
    static let longestRetry = 60
    private let state = OrderedMutex(State())

    /// A table of at most `capacity` sessions, `perCredential` of them for any one credential, each
    /// lasting at most `lifetime`.
    init(capacity: Int, perCredential: Int = .max, lifetime: Duration) {
        precondition(capacity >= 1 && perCredential >= 1, "a session table holds at least one session")
        self.capacity = capacity
        self.perCredential = perCredential
        self.lifetime = lifetime
    }

    /// The key of the session with `id`.
    static func key(_ id: String) -> Key { SHA256.hash(data: Array(id.utf8)) }

    /// Whose sessions `credential`, presented as `token`, makes: its JWT subject when it has one (every
    /// token of that subject counts as one), else the token (a static token's secret, a JWT without `sub`).
    static func holder(of credential: AccessControl.Credential, token: String) -> Holder {
        let name = credential.subject.map { "subject " + $0 } ?? "token " + token
        return SHA256.hash(data: Array(name.utf8))
    }

    /// Starts a session for `credential` held by `holder`, ending no later than the credential; returns
    /// its id, when it ends, and the keys of sessions dropped to make room (expired ones, and the
    /// holder's own oldest). Throws `tooManySessions` when the table is full of others' live sessions.
    func create(
        for credential: AccessControl.Credential, holder: Holder,
        now: Date = Date()
    ) throws(RequestError) -> (id: String, expiresAt: Date, evicted: [Key]) {
        let longest = now.addingTimeInterval(TimeInterval(lifetime.components.seconds))
        let expiresAt = min(credential.expiresAt ?? longest, longest)
        var stored = credential
        stored.expiresAt = expiresAt
        let id = SessionID.make()
        let (capacity, perCredential) = (capacity, perCredential)
        let evicted = try state.withLock { (state) throws(RequestError) -> [Key] in
            var evicted: [Key] = []
            // Past its own cap a credential makes room among its own sessions: expired ones, then the oldest.
            if let own = state.byHolder[holder], own.count >= perCredential {
                evicted = state.removeExpired(among: own, now: now)
                while let own = state.byHolder[holder], own.count >= perCredential {
                    state.remove(own[0])
                    evicted.append(own[0])
                }
            }
            if state.entries.count >= capacity { evicted += state.removeExpired(now: now) }
            while state.entries.count >= capacity {
                guard let oldest = state.byHolder[holder]?.first else {
                    let soonest = state.entries.values.lazy.map(\.expiresAt).min() ?? now
                    let wait = Int(soonest.timeIntervalSince(now).rounded(.up))
                    throw .tooManySessions(limit: capacity, retryAfter: min(max(1, wait), Self.longestRetry))
                }
                state.remove(oldest)
                evicted.append(oldest)
            }
            state.insert(Entry(credential: stored, holder: holder, expiresAt: expiresAt), at: Self.key(id))
            return evicted
        }
        return (id, expiresAt, evicted)
    }

    /// The credential of the live session with `id`, carrying its key; nil when there is none (an
    /// expired one is dropped).
    func credential(for id: String, now: Date = Date()) -> AccessControl.Credential? {
        let key = Self.key(id)
        return state.withLock { state in
            guard let entry = state.entries[key] else { return nil }
            guard entry.expiresAt > now else {
                state.remove(key)
                return nil
            }
            var credential = entry.credential
            credential.session = key
            return credential
        }
    }

    /// Ends the session with `id`; returns its key when there was one.
    func remove(_ id: String) -> Key? {
        let key = Self.key(id)
        return state.withLock { $0.remove(key) == nil ? nil : key }
    }

    /// Sessions held now (live or expired but not yet dropped).
    var count: Int { state.withLock { $0.entries.count } }

    /// Sessions `holder` holds now (live or expired but not yet dropped).
    func count(heldBy holder: Holder) -> Int { state.withLock { $0.byHolder[holder]?.count ?? 0 } }
}
