import LiveBindEngine
internal import LiveBindHTTP
/// How many event streams each client address holds, up to a limit (`--max-streams-per-address`), so
/// that one client cannot take every stream `--max-streams` allows.
///
/// The address is the TCP peer's, or with `--trust-proxy` the one the trusted proxy forwarded (what
/// `--write-rate` counts by). Loopback addresses are not counted: every process on the machine
/// shares them, a proxy on the same host among them, so a cap there would be one cap for everyone.
/// The table holds only addresses with a stream open, so it is bounded by `--max-streams`.
///
/// > Important: called on libmicrohttpd worker threads; every method takes one short lock.
final class AddressQuota: Sendable {
    /// One stream's share of its address, given back once when the stream ends.
    struct Hold: Sendable {
        let quota: AddressQuota
        let address: String

        /// Gives the share back. Call it exactly once.
        func release() { quota.release(address) }
    }

    /// Most streams one address may hold at once.
    let limit: Int
    /// Whether loopback addresses count too (a test seam: test clients are all on loopback).
    let countsLoopback: Bool
    private let held = OrderedMutex<[String: Int]>([:])

    /// A quota of at most `limit` streams per address.
    init(limit: Int, countsLoopback: Bool = false) {
        precondition(limit >= 1, "an address quota allows at least one stream")
        self.limit = limit
        self.countsLoopback = countsLoopback
    }

    /// Takes one stream for `address`: a hold to release when the stream ends, nil when the address is
    /// not counted (none known, or loopback). Throws 503 when the address holds `limit` already.
    func take(for address: String?) throws(RequestError) -> Hold? {
        // Canonical, so that a dual-stack server's IPv4 peer (::ffff:192.0.2.1) is its IPv4 address.
        guard let address = address.map({ TrustedProxies.canonical($0) ?? $0 }),
            countsLoopback || !AccessControl.isLoopback(address: address)
        else { return nil }
        let taken = held.withLock { held in
            let count = held[address, default: 0]
            guard count < limit else { return false }
            held[address] = count + 1
            return true
        }
        guard taken else { throw .tooManyStreamsFromAddress(limit: limit) }
        return Hold(quota: self, address: address)
    }

    /// Streams `address` holds now.
    func count(for address: String) -> Int { held.withLock { $0[address, default: 0] } }

    /// Addresses holding at least one stream now.
    var addresses: Int { held.withLock { $0.count } }

    private func release(_ address: String) {
        held.withLock { held in
            guard let count = held[address] else { preconditionFailure("released a stream \(address) did not hold") }
            held[address] = count > 1 ? count - 1 : nil
        }
    }
}
