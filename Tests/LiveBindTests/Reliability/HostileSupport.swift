import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The hostile-sequence suites (issue 13): each case is a script of requests against a real
/// `livebind-server` process, and after each refusal checks that the server still answers, that the
/// answer is the limit's problem, that nothing changed and no event went out, and that the process's
/// memory stayed under the case's stated bound.
extension ReliabilityTests {
    @Suite("Hostile sequences") struct HostileSequenceTests {}
}

/// A `livebind-server` process started for one script (port 0, `--no-demo`), with the reads a script
/// checks between its steps, and a watchdog that holds it to the case's memory bound.
/// Only this process is ever signalled, by its pid.
final class HostileServer {
    let process: ServerProcess
    let port: Int
    let bound: MemoryBound
    private let watchdog: MemoryWatchdog

    /// Starts the server with `arguments` after `--no-demo`, watched against `bound`.
    init(_ arguments: [String] = [], bound: MemoryBound) throws {
        process = try ServerProcess(["--no-demo"] + arguments)
        self.bound = bound
        watchdog = MemoryWatchdog(pid: process.process.processIdentifier, bound: bound)
        port = try process.waitForPort(timeout: 30)
    }

    deinit {
        watchdog.stop()
        if (try? process.terminate()) == nil { try? process.kill() }
    }

    var pid: Int32 { process.process.processIdentifier }

    /// One request with a text body of `type`.
    func send(
        _ method: String, _ target: String, _ body: String, type: String = "application/json",
        timeout: Double = 30
    ) throws -> TestHTTPResponse {
        try TestHTTPClient.request(port: port, method, target, headers: [("Content-Type", type)], text: body, timeout: timeout)
    }

    func get(_ target: String) throws -> TestHTTPResponse {
        try TestHTTPClient.request(port: port, "GET", target, timeout: 30)
    }

    func delete(_ target: String) throws -> TestHTTPResponse {
        try TestHTTPClient.request(port: port, "DELETE", target, timeout: 30)
    }

    /// Whether `/healthz` answers `{"status":"ok"}` (and the process is still running).
    var isUp: Bool {
        guard process.process.isRunning, let response = try? get("/healthz"), response.status == 200 else { return false }
        return response.text.contains(#""ok""#)
    }

    /// What a refused write must leave as it was: the body, its ETag (the revision) and the event id it
    /// was read at (the store's last sequence, which a refused write must not use up).
    func state(of model: String) throws -> ModelState {
        let response = try get("/models/\(model)")
        return ModelState(
            status: response.status, body: response.text, etag: response.header("ETag"),
            eventID: response.header("LiveBind-Event-ID"))
    }

    /// The process's memory now, from `/proc/<pid>/status`.
    func memory() -> ProcessMemory {
        ProcessMemory(pid: pid)
    }

    /// Throws when the watchdog found the process over its bound (and killed it): loops that grow
    /// something call it after each step, to stop at the first step past the bound.
    func requireMemory() throws {
        if let breach = watchdog.breach { throw TestSocketError(description: breach) }
    }

    /// Runs `body`; when it throws, says first whether the watchdog killed the server or the server
    /// exited by itself (with the end of its log), since a dropped connection is all the script sees.
    func explainingFailures<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            try requireMemory()
            if !process.process.isRunning {
                throw TestSocketError(
                    description: "server exited (status \(process.process.terminationStatus)) during the script: "
                        + "\(error); its log ends: \(process.log.suffix(2_000))")
            }
            throw error
        }
    }

    /// Expects that the watchdog never saw the process over its bound and that its peak resident memory
    /// (VmHWM) is under the bound now; returns the peak in MiB.
    @discardableResult
    func expectPeakMemory(sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        let memory = memory()
        let limit = bound.kilobytes(sanitized: memory.isSanitized)
        #expect(watchdog.breach == nil, "\(watchdog.breach ?? "")", sourceLocation: sourceLocation)
        #expect(
            memory.peakKB > 0 && memory.peakKB <= limit,
            "server peak RSS \(memory.peakKB / 1024) MiB, bound \(limit / 1024) MiB", sourceLocation: sourceLocation)
        return memory.peakKB / 1024
    }

    /// `duration` for a plain build; ten times it when the server runs under a sanitizer (TSan slows
    /// this server down five to fifteen times).
    func scaled(_ duration: Duration) -> Duration {
        memory().isSanitized ? duration * 10 : duration
    }

    /// `/metrics` as name → value, waiting up to 30 s for the answer.
    func metrics() throws -> [String: Int] {
        let text: String
        do { text = try get("/metrics").text } catch {
            try requireMemory()  // a server the watchdog killed: say so rather than "connection refused"
            throw error
        }
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }
}

/// Reads a process's resident memory every 20 ms on its own thread and kills the process (SIGKILL, by
/// its pid) the first time it is over the bound: a server that does not bound its memory then fails
/// its case instead of exhausting the machine, even while it is too busy to answer requests.
final class MemoryWatchdog: Sendable {
    private let state = Mutex<(breach: String?, stopped: Bool)>((nil, false))

    init(pid: Int32, bound: MemoryBound) {
        Thread.detachNewThread { [self] in
            while true {
                let memory = ProcessMemory(pid: pid)
                let limit = bound.kilobytes(sanitized: memory.isSanitized)
                let stop = state.withLock { state -> Bool in
                    if state.stopped || memory.residentKB == 0 { return true }
                    if memory.residentKB > limit {
                        state.breach = "server RSS reached \(memory.residentKB) kB, over the bound of \(limit) kB: killed"
                        kill(pid, SIGKILL)
                        return true
                    }
                    return false
                }
                if stop { return }
                usleep(20_000)
            }
        }
    }

    /// What the watchdog found, if the process went over its bound.
    var breach: String? { state.withLock { $0.breach } }

    /// Stops watching (before the process is stopped, so its pid is never signalled once reused).
    func stop() { state.withLock { $0.stopped = true } }
}

/// A model as a client reads it.
struct ModelState: Equatable, CustomStringConvertible {
    var status: Int
    var body: String
    var etag: String?
    var eventID: String?

    var description: String { "\(status) ETag \(etag ?? "-") at \(eventID ?? "-"), \(body.utf8.count) bytes" }
}

/// `VmRSS`, `VmHWM` and `VmSize` of a process, in kB.
struct ProcessMemory {
    var residentKB = 0
    var peakKB = 0
    var virtualKB = 0

    init(pid: Int32) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return }
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let value = Int(parts[1]) else { continue }
            switch parts[0] {
            case "VmRSS:": residentKB = value
            case "VmHWM:": peakKB = value
            case "VmSize:": virtualKB = value
            default: break
            }
        }
    }

    /// Whether the process runs under ASan or TSan: both reserve terabytes of address space for shadow
    /// memory, which no plain build comes near.
    var isSanitized: Bool { virtualKB > 1 << 30 }
}

/// A case's bound on the server's resident memory. The bound is stated for a plain (debug or release)
/// build. Under a sanitizer the process also carries shadow memory, redzones and, with ASan, up to
/// 256 MiB of freed blocks in quarantine (a case that only churns small allocations reaches 500 MiB
/// there while it stays under 40 MiB plain), so the bound is four times the plain one plus 512 MiB: it
/// still catches memory that grows without bound, not a plain build's figure.
struct MemoryBound {
    var mebibytes: Int

    init(mebibytes: Int) { self.mebibytes = mebibytes }

    func kilobytes(sanitized: Bool) -> Int {
        (sanitized ? mebibytes * 4 + 512 : mebibytes) * 1024
    }
}

/// An all-models event stream opened before a script's first step. After each step the script calls
/// ``events()``, which writes to a sentinel model and reads up to that write's event: everything
/// before it is what the step streamed, so "no event for a refused write" needs no sleep.
final class EventWatch {
    let stream: TestEventStream
    private let server: HostileServer
    private var writes = 0

    static let model = "hostile-sentinel"

    /// Creates the sentinel model, opens the stream and reads past its opening snapshots.
    init(_ server: HostileServer) throws {
        self.server = server
        let created = try server.send("PUT", "/models/\(Self.model)", #"{"n":0}"#)
        guard created.status == 201 || created.status == 200 else {
            throw TestSocketError(description: "sentinel model not created: \(created.status) \(created.text)")
        }
        stream = try TestEventStream(port: server.port, target: "/events", timeout: 30)
        guard stream.status == 200 else { throw TestSocketError(description: "event stream answered \(stream.status)") }
        _ = try events()
    }

    /// The events streamed since the last call, in order, without the sentinel's own.
    func events() throws -> [TestEvent] {
        writes += 1
        let write = try server.send("PUT", "/models/\(Self.model)/n", "\(writes)")
        guard write.status == 200, let id = try write.object()["id"] as? String else {
            throw TestSocketError(description: "sentinel write answered \(write.status) \(write.text)")
        }
        var seen: [TestEvent] = []
        while true {
            guard let event = try stream.next() else { throw TestSocketError(description: "event stream ended") }
            if event.id == id, event.type == "set", event.data.contains(#""model":"\#(Self.model)""#) { return seen }
            seen.append(event)
        }
    }
}

/// Checks a refusal: `status`, `application/problem+json`, type `urn:livebind:problem:limit-exceeded`
/// and a detail that names `flag`.
func expectLimitProblem(
    _ response: TestHTTPResponse, _ status: Int, flag: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(response.isProblem(status), "\(response.status) \(response.text.prefix(300))", sourceLocation: sourceLocation)
    let problem = (try? response.object()) ?? [:]
    #expect(problem["type"] as? String == "urn:livebind:problem:limit-exceeded", "\(problem)", sourceLocation: sourceLocation)
    #expect((problem["detail"] as? String)?.contains(flag) == true, "\(problem)", sourceLocation: sourceLocation)
}

/// `{"a":{"a":…1…}}` with `levels` objects.
func nestedObject(_ levels: Int, key: String = "a", leaf: String = "1") -> String {
    String(repeating: #"{"\#(key)":"#, count: levels) + leaf + String(repeating: "}", count: levels)
}

/// A JSON Pointer of `count` components `component`, after `prefix`.
func repeatedPointer(_ count: Int, component: String = "a", prefix: String = "") -> String {
    prefix + String(repeating: "/" + component, count: count)
}
