import Synchronization
import LiveBindEngine

/// Writes per client, as token buckets: each client (its bearer token, or its address without one)
/// may write `burst` times at once and `rate` times a second after that. Reads and streams never
/// pass here.
///
/// The table holds at most `maxClients` buckets: when it is full, the buckets that have refilled (whose
/// clients carry no debt) go first, then the ones idle longest, so that memory stays bounded however
/// many clients come and go.
final class WriteRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let rate: Double
    let burst: Int
    let maxClients: Int
    private let buckets = OrderedMutex<[Int: Bucket]>([:])

    init(rate: Double, burst: Int, maxClients: Int) {
        precondition(rate > 0 && burst >= 1 && maxClients >= 1, "a rate limit needs a rate, a burst and a table")
        self.rate = rate
        self.burst = burst
        self.maxClients = maxClients
    }

    /// How many clients the table tracks now.
    var trackedClients: Int { buckets.withLock { $0.count } }

    /// Takes one write for `client` at `now`: `nil` when it may go ahead, else the whole seconds until
    /// it may (for `Retry-After`). Clients are told apart by a hash of their key, so a long token
    /// costs the table no more than a short one.
    func take(for client: String, at now: ContinuousClock.Instant = .now) -> Int? {
        var hasher = Hasher()
        hasher.combine(client)
        let key = hasher.finalize()
        let wait = buckets.withLock { (buckets) -> Double? in
            var bucket = buckets[key] ?? Bucket(tokens: Double(burst), updated: now)
            bucket.tokens = min(Double(burst), bucket.tokens + max(0, Self.seconds(now - bucket.updated)) * rate)
            bucket.updated = now
            if buckets[key] == nil, buckets.count >= maxClients { evict(&buckets, now: now) }
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return (1 - bucket.tokens) / rate
            }
            bucket.tokens -= 1
            buckets[key] = bucket
            return nil
        }
        guard let wait else { return nil }
        // A rate near zero makes the wait too long for an Int: a day is as good as forever for Retry-After.
        return max(1, Int(min(wait.rounded(.up), 86_400)))
    }

    /// Makes room for more clients: drops the buckets that are full again, and then, while more than
    /// three quarters of the table is left, the ones idle longest (so that the next sweep is at least
    /// a quarter of the table's new clients away).
    private func evict(_ buckets: inout [Int: Bucket], now: ContinuousClock.Instant) {
        let full = Double(burst)
        buckets = buckets.filter { _, bucket in
            bucket.tokens + max(0, Self.seconds(now - bucket.updated)) * rate < full
        }
        let keep = maxClients * 3 / 4
        guard buckets.count > keep else { return }
        let byAge = buckets.sorted { $0.value.updated < $1.value.updated }
        for (key, _) in byAge.prefix(buckets.count - keep) { buckets[key] = nil }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
