import Crypto
import Foundation
import OrderedCollections
import Synchronization

/// The live cookie sessions: what each may do (its token's scopes and prefixes) and until when.
///
/// Sessions are kept under the SHA-256 of their id, so that looking one up compares digests, never
/// the secret itself: how long a lookup takes tells nothing about how much of a guessed id was right.
/// The table holds at most `capacity` sessions; a new one past it first drops the expired ones, then
/// the oldest (whose browser then gets 401 and makes a new one).
///
/// > Important: called on libmicrohttpd worker threads; every method takes one short lock.
final class SessionTable: Sendable {
    /// A session's key in the table (and on the streams it opened): the digest of its id.
    typealias Key = SHA256Digest

    private struct Entry {
        let credential: AccessControl.Credential
        let expiresAt: Date
    }

    let capacity: Int
    let lifetime: Duration
    private let entries = OrderedMutex<OrderedDictionary<Key, Entry>>([:])

    /// A table of at most `capacity` sessions, each lasting at most `lifetime`.
    init(capacity: Int, lifetime: Duration) {
        precondition(capacity >= 1, "a session table holds at least one session")
        self.capacity = capacity
        self.lifetime = lifetime
    }

    /// The key of the session with `id`.
    static func key(_ id: String) -> Key { SHA256.hash(data: Array(id.utf8)) }

    /// Starts a session for `credential`, ending no later than the credential; returns its id, when it
    /// ends, and the keys of sessions dropped to make room.
    func create(for credential: AccessControl.Credential, now: Date = Date()) -> (id: String, expiresAt: Date, evicted: [Key]) {
        let longest = now.addingTimeInterval(TimeInterval(lifetime.components.seconds))
        let expiresAt = min(credential.expiresAt ?? longest, longest)
        var stored = credential
        stored.expiresAt = expiresAt
        let id = SessionID.make()
        let evicted: [Key] = entries.withLock { entries in
            var evicted: [Key] = []
            if entries.count >= capacity {
                evicted = entries.filter { $0.value.expiresAt <= now }.map(\.key)
                for key in evicted { entries.removeValue(forKey: key) }
            }
            while entries.count >= capacity { evicted.append(entries.removeFirst().key) }
            entries[Self.key(id)] = Entry(credential: stored, expiresAt: expiresAt)
            return evicted
        }
        return (id, expiresAt, evicted)
    }

    /// The credential of the live session with `id`, carrying its key; nil when there is none (an
    /// expired one is dropped).
    func credential(for id: String, now: Date = Date()) -> AccessControl.Credential? {
        let key = Self.key(id)
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard entry.expiresAt > now else {
                entries.removeValue(forKey: key)
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
        return entries.withLock { $0.removeValue(forKey: key) == nil ? nil : key }
    }

    /// Sessions held now (live or expired but not yet dropped).
    var count: Int { entries.withLock { $0.count } }
}
