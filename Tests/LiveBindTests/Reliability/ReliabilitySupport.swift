import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The fault and slow-client suites. They run one at a time: each loads the machine (thousands of
/// sockets, megabytes of events) and one checks the process's memory.
@Suite("Reliability", .serialized) struct ReliabilityTests {}

/// A value a test hands to a helper thread; the test keeps to the thread contract itself.
final class ThreadBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// An integer shared between a test and its helper threads.
final class SharedCount: Sendable {
    private let atomic = Atomic<Int>(0)
    var value: Int { atomic.load(ordering: .acquiring) }
    func add(_ count: Int = 1) { atomic.add(count, ordering: .releasing) }
}

/// Runs `body` on a new thread; `join()` waits for it (bounded) and rethrows what it threw.
final class TestThread: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let failure = Mutex<String?>(nil)

    init(_ body: @escaping @Sendable () throws -> Void) {
        Thread.detachNewThread { [self] in
            do { try body() } catch { failure.withLock { $0 = "\(error)" } }
            done.signal()
        }
    }

    /// Waits up to `seconds` for the thread to finish; throws its error or a timeout.
    func join(seconds: Double) throws {
        guard done.wait(timeout: .now() + seconds) == .success else {
            throw TestSocketError(description: "helper thread still running after \(seconds) s")
        }
        done.signal()  // joinable again
        if let message = failure.withLock({ $0 }) { throw TestSocketError(description: message) }
    }
}

/// Polls `condition` every 50 ms until it holds or `seconds` pass; returns whether it held.
func waitUntil(seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < end {
        if try condition() { return true }
        usleep(50_000)
    }
    return try condition()
}

/// The server's `/metrics` as name → value.
func readMetrics(port: Int) throws -> [String: Int] {
    let text = try TestHTTPClient.request(port: port, "GET", "/metrics").text
    var values: [String: Int] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        let parts = line.split(separator: " ")
        if parts.count == 2, let value = Int(parts[1]) { values[String(parts[0])] = value }
    }
    return values
}

/// Reads `/metrics` until `name` reaches `value` (events are published on the event feed's thread,
/// a moment after the write is answered), for at most `seconds`; returns the last reading.
@discardableResult
func waitForMetric(port: Int, _ name: String, atLeast value: Int, seconds: Double = 10) throws -> [String: Int] {
    let deadline = Date().addingTimeInterval(seconds)
    var metrics = try readMetrics(port: port)
    while (metrics[name] ?? 0) < value, Date() < deadline {
        usleep(2_000)
        metrics = try readMetrics(port: port)
    }
    return metrics
}

/// This process's resident memory in kB, from `/proc/self/status` (VmRSS).
func residentKilobytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
}

/// Whether the peer closed (or reset) the socket: reads and discards what is buffered until end of
/// stream, for at most `seconds`. The corresponding C functions are `poll` and `recv`.
func peerClosed(_ socket: TestSocket, seconds: Double) -> Bool {
    let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    var chunk = [UInt8](repeating: 0, count: 65536)
    repeat {  // at least one look, even with no time to wait
        var entry = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, seconds > 0 ? 100 : 0) >= 0 else { return false }
        if entry.revents == 0 { continue }
        let count = chunk.withUnsafeMutableBytes { recv(socket.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count == 0 { return true }
        if count < 0 && errno != EAGAIN && errno != EINTR { return true }  // ECONNRESET and the like
    } while ContinuousClock.now < end
    return false
}
