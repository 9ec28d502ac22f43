internal import CMicroHTTPD
import Dispatch
import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
internal import LiveBindEngine

/// A thin owner of one libmicrohttpd daemon: start, quiesce, stop. Nothing here is public.
///
/// Requests are answered synchronously on libmicrohttpd's worker threads by `handlers`.
/// The C callbacks live in `MicroHTTPDDaemon+Callbacks.swift`.
package final class MicroHTTPDDaemon: Sendable {
    /// How the daemon listens and what it allows.
    package struct Options: Sendable {
        var host: String
        var port: UInt16
        var connectionLimit: Int
        /// Most connections from one peer address (0: no cap); past it libmicrohttpd closes a new one at once.
        var connectionsPerAddress = 0
        var connectionMemoryLimit: Int
        var connectionTimeoutSeconds: Int
        /// Longest time a request's headers and body may take to arrive (slowloris).
        var requestTimeout: Duration
        var threadPoolSize: Int
        var sendBufferSize: Int
        var bodyLimit: Int
        /// Which requests carry the client's address (`HTTPRequest.clientAddress`): one system call each.
        package var clientAddresses = ClientAddresses.none
        /// The certificate served over TLS; nil serves plain HTTP.
        package var certificate: MicroHTTPDCertificate?
        /// The `Server` header every answer carries.
        var serverHeader: String

        /// Options for a daemon that serves plain HTTP and records no client's address (set
        /// `clientAddresses` and `certificate` for more).
        package init(
            host: String, port: UInt16, connectionLimit: Int, connectionsPerAddress: Int,
            connectionMemoryLimit: Int, connectionTimeoutSeconds: Int, requestTimeout: Duration,
            threadPoolSize: Int, sendBufferSize: Int, bodyLimit: Int, serverHeader: String
        ) {
            self.host = host
            self.port = port
            self.connectionLimit = connectionLimit
            self.connectionsPerAddress = connectionsPerAddress
            self.connectionMemoryLimit = connectionMemoryLimit
            self.connectionTimeoutSeconds = connectionTimeoutSeconds
            self.requestTimeout = requestTimeout
            self.threadPoolSize = threadPoolSize
            self.sendBufferSize = sendBufferSize
            self.bodyLimit = bodyLimit
            self.serverHeader = serverHeader
        }
    }

    /// Which requests carry their client's address.
    package enum ClientAddresses: Sendable, Equatable {
        case none
        case all
        /// Requests for these paths (what the routes that count by address need): a path ending in
        /// `/` covers every path under it, another only itself.
        case paths([String])

        func covers(_ path: String) -> Bool {
            switch self {
            case .none: false
            case .all: true
            case .paths(let only): only.contains { $0.hasSuffix("/") ? path.hasPrefix($0) : path == $0 }
            }
        }
    }

    /// The application side: answers requests and turns transport failures into responses.
    package struct Handlers: Sendable {
        /// Answers a request whose body has been read.
        var respond: @Sendable (HTTPRequest) -> HTTPResponse
        /// Answers a request the transport refused (body too large, length required).
        var reject: @Sendable (HTTPRequest, HTTPTransportFailure) -> HTTPResponse
        /// A libmicrohttpd log line as it may be logged: without the credentials it may quote.
        var redactLog: @Sendable (String) -> String

        /// The application side from its three parts.
        package init(
            respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
            reject: @escaping @Sendable (HTTPRequest, HTTPTransportFailure) -> HTTPResponse,
            redactLog: @escaping @Sendable (String) -> String
        ) {
            self.respond = respond
            self.reject = reject
            self.redactLog = redactLog
        }
    }

    package let options: Options
    let handlers: Handlers
    let logger: Logger
    /// Where slow requests and stalled streams are counted.
    let counters: ServerCounters
    /// The per-request deadline, enforced by a timer while running.
    let deadlines: RequestDeadlines
    /// Connections suspended until their answer is known (writes waiting for the disk): stopping
    /// the daemon with one suspended would abort the process.
    let deferredAnswers = Atomic<Int>(0)
    /// Told when a suspended connection got its answer.
    let deferredAnswered = WaitSignal()
    /// Whether a new connection is taken, and a connection may be suspended for a deferred answer;
    /// false from ``quiesce()`` on.
    let accepting = Atomic<Bool>(true)

    /// Waits (up to `timeout`) until no connection waits for its answer; false when some still do.
    package func waitForDeferredAnswers(timeout: Duration) -> Bool {
        deferredAnswered.wait(until: .now + timeout) { deferredAnswers.load(ordering: .acquiring) == 0 }
    }
    private struct State: @unchecked Sendable {  // the handle is only touched under the mutex
        var daemon: OpaquePointer?
        var port: UInt16 = 0
        var sweeper: HeartbeatTimer?
    }
    private let state = OrderedMutex(State())

    package init(options: Options, handlers: Handlers, counters: ServerCounters, logger: Logger) {
        self.options = options
        self.handlers = handlers
        self.counters = counters
        self.logger = logger
        deadlines = RequestDeadlines(limit: options.requestTimeout)
    }

    /// The port the daemon is bound to (useful after asking for port 0); 0 when not running.
    package var port: UInt16 { state.withLock { $0.port } }

    /// Binds and starts the worker threads. The corresponding C function is `MHD_start_daemon`.
    package func start() throws(TransportError) {
        let address = try Self.socketAddress(host: options.host, port: options.port)
        let context = Unmanaged.passUnretained(self).toOpaque()
        if options.certificate != nil, MHD_is_feature_supported(.FEATURE_TLS) != .YES { throw .tlsUnsupported }
        let flags =
            MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_ERROR_LOG.rawValue | (address.isIPv6 ? MHD_USE_IPv6.rawValue : 0)
            | (options.certificate != nil ? MHD_USE_TLS.rawValue : 0)
        let started: OpaquePointer? = address.storage.withUnsafeBytes { addressBytes in
            let addressPointer = UnsafeMutableRawPointer(mutating: addressBytes.baseAddress)
            var items: [MHD_OptionItem] = [
                // The logger goes first, or libmicrohttpd logs the options before it to stderr.
                Self.callbackItem(
                    .EXTERNAL_LOGGER,
                    unsafeBitCast(errorLogTrampoline, to: UnsafeMutableRawPointer.self), context),
                Self.item(.CONNECTION_LIMIT, options.connectionLimit),
                Self.item(.CONNECTION_MEMORY_LIMIT, options.connectionMemoryLimit),
                Self.item(.CONNECTION_TIMEOUT, options.connectionTimeoutSeconds),
                MHD_OptionItem(option: .SOCK_ADDR, value: 0, ptr_value: addressPointer),
                Self.callbackItem(
                    .NOTIFY_COMPLETED,
                    unsafeBitCast(requestCompletedTrampoline, to: UnsafeMutableRawPointer.self), context),
                Self.callbackItem(
                    .NOTIFY_CONNECTION,
                    unsafeBitCast(connectionNotifyTrampoline, to: UnsafeMutableRawPointer.self), context),
                Self.callbackItem(
                    .UNESCAPE_CALLBACK,
                    unsafeBitCast(unescapeTrampoline, to: UnsafeMutableRawPointer.self), context)
            ]
            if options.certificate != nil {
                // GnuTLS asks for the certificate at each handshake, so that a reload reaches new connections.
                items.append(
                    MHD_OptionItem(
                        option: .HTTPS_CERT_CALLBACK, value: 0,
                        ptr_value: unsafeBitCast(certificateRetrieveTrampoline, to: UnsafeMutableRawPointer.self)))
            }
            if options.connectionsPerAddress > 0 {
                items.append(Self.item(.PER_IP_CONNECTION_LIMIT, options.connectionsPerAddress))
            }
            if options.threadPoolSize > 1 {
                items.append(Self.item(.THREAD_POOL_SIZE, options.threadPoolSize))
            }
            items.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
            return items.withUnsafeBufferPointer { buffer in
                livebind_start_daemon(
                    flags, options.port, acceptPolicyTrampoline, accessHandlerTrampoline, context, buffer.baseAddress)
            }
        }
        guard let started else {
            throw .cannotListen(host: options.host, port: Int(options.port))
        }
        let boundPort = livebind_daemon_port(started)
        // Before this no client knows a port-0 daemon's port; on a fixed port a handshake that comes
        // first fails (no certificate yet) and the client retries.
        if let certificate = options.certificate {
            MicroHTTPDCertificates.install(certificate, port: boundPort, owner: ObjectIdentifier(self))
        }
        let (deadlines, counters) = (deadlines, counters)
        let sweeper = HeartbeatTimer(interval: deadlines.sweepInterval) {
            let cut = deadlines.sweep()
            if cut > 0 { counters.slowRequestsClosed.add(cut, ordering: .relaxed) }
        }
        state.withLock {
            $0.daemon = started
            $0.port = boundPort
            $0.sweeper = sweeper
        }
    }

    /// Serves `certificate` to every handshake from now on; open connections keep the one they have.
    package func replaceCertificate(_ certificate: MicroHTTPDCertificate) {
        state.withLock { state in
            guard state.daemon != nil else { return }
            MicroHTTPDCertificates.install(certificate, port: state.port, owner: ObjectIdentifier(self))
        }
    }

    /// Stops taking new connections: from now on one is closed as soon as it is accepted; existing
    /// ones go on.
    ///
    /// Not `MHD_quiesce_daemon`: with a thread pool, 0.9.75 takes the listening socket out of each
    /// worker's epoll set while the worker may be doing the same, and aborts the process when it
    /// loses that race ("Failed to remove listen FD from epoll set", seen once in a sanitizer run).
    package func quiesce() {
        accepting.store(false, ordering: .sequentiallyConsistent)
    }

    /// How long a worker waits for a deferred answer once the daemon is stopping (it does not
    /// suspend the connection then).
    static let stoppingAnswerWait = Duration.seconds(5)

    /// Stops the worker threads and closes every connection. The corresponding C function is `MHD_stop_daemon`.
    ///
    /// > Important: no connection may be suspended at this point (libmicrohttpd aborts the process).
    package func stop() {
        let (daemon, sweeper, port) = state.withLock { state in
            defer { state.daemon = nil; state.port = 0; state.sweeper = nil }
            return (state.daemon, state.sweeper, state.port)
        }
        sweeper?.cancel()
        guard let daemon else { return }
        // Once in a full parallel test run a worker of 0.9.75 was seen never waking from epoll_wait, so
        // MHD_stop_daemon's join blocked forever. Stop on a thread of its own and wait a bounded time:
        // past it, log, and keep this object (the callbacks' context) alive for the stuck worker.
        let stopped = DispatchSemaphore(value: 0)
        let handle = DaemonHandle(pointer: daemon)
        Thread.detachNewThread {
            MHD_stop_daemon(handle.pointer)
            stopped.signal()
        }
        guard stopped.wait(timeout: .now() + Self.stopDeadline) == .success else {
            logger.error("libmicrohttpd did not stop its worker threads within \(Self.stopDeadline); leaving them behind")
            _ = Unmanaged.passRetained(self)
            return
        }
        if options.certificate != nil { MicroHTTPDCertificates.remove(port: port, owner: ObjectIdentifier(self)) }
    }

    /// How long `stop()` waits for libmicrohttpd's worker threads to end.
    static let stopDeadline = DispatchTimeInterval.seconds(10)

    /// The daemon handle, carried to the thread that stops it; nothing else touches it by then.
    private struct DaemonHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private static func item(_ option: MHD_OPTION, _ value: Int) -> MHD_OptionItem {
        MHD_OptionItem(option: option, value: value, ptr_value: nil)
    }

    /// Options that take a function and its context travel as (value: function, ptr_value: context).
    private static func callbackItem(
        _ option: MHD_OPTION, _ function: UnsafeMutableRawPointer,
        _ context: UnsafeMutableRawPointer
    ) -> MHD_OptionItem {
        MHD_OptionItem(option: option, value: Int(bitPattern: function), ptr_value: context)
    }
}
