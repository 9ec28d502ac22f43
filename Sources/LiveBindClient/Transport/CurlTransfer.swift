import CCurl
import Foundation

/// One request on the ``CurlLoop``: its libcurl easy handle, and what it has received so far,
/// handed to the task that reads it: the head (status and headers) once, then the body in chunks.
///
/// The body is read as it comes. A reader that falls behind pauses the transfer (libcurl stops
/// reading the socket) once `bufferLimit` bytes wait for it, and resumes it when it has caught up: a
/// stream's memory is bounded by that limit, not by how fast the server writes.
///
/// A transfer with a `silence` limit ends when no line (of the head or the body) arrives for that
/// long while it is not paused. The loop's thread measures it as bytes arrive, so a process whose
/// tasks are slow to read (a busy cooperative pool) does not take a live server for a silent one.
final class CurlTransfer: @unchecked Sendable {
    /// The status and the headers (names lower-cased, in the order received) of an answer.
    struct Head: Sendable {
        var status: Int
        var headers: [(name: String, value: String)]
    }

    let easy: UnsafeMutableRawPointer
    /// How long the transfer may go without a line before the loop ends it (nil: no limit).
    let silence: Duration?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let bufferLimit: Int

    private struct State {
        var lines: [String] = []
        var head: Head?
        /// The task waiting in ``start()`` for the head.
        var waiting: CheckedContinuation<Head, any Error>?
        var cancelled = false
        /// Whether the whole answer arrived (a body that ends otherwise was cut off).
        var complete = false
        /// Bytes handed to the body and not yet read, and whether the transfer paused for them.
        var unread = 0
        var paused = false
        /// When a line last ended (or the transfer started or resumed).
        var lastLine = ContinuousClock.now
    }
    private let state = OrderedMutex(State())
    private let body: AsyncThrowingStream<[UInt8], any Error>
    private let bodyInput: AsyncThrowingStream<[UInt8], any Error>.Continuation

    /// A transfer of `method` to `url` with `headers` ("Name: value") and `body`; `timeout` bounds the
    /// whole transfer (nil: none, for event streams), `connectTimeout` its connection, `silence` the
    /// time between lines.
    init(
        method: String, url: String, headers: [String], body: [UInt8]?, timeout: Duration?,
        connectTimeout: Duration, silence: Duration? = nil, caFile: String?, bufferLimit: Int = 1 << 20
    ) {
        _ = CurlLoop.shared  // libcurl's global initialisation, before any handle
        easy = curl_easy_init()!
        self.silence = silence
        self.bufferLimit = bufferLimit
        (self.body, bodyInput) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        // No `Expect: 100-continue` round trip before a body.
        for line in headers + ["Expect:"] { headerList = curl_slist_append(headerList, line) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        livebind_curl_set_pointer(easy, CURLOPT_URL, url)
        livebind_curl_set_long(easy, CURLOPT_NOSIGNAL, 1)
        // The server named, never a proxy from the environment (`http_proxy`, `https_proxy`).
        livebind_curl_set_pointer(easy, CURLOPT_PROXY, "")
        livebind_curl_set_pointer(easy, CURLOPT_HTTPHEADER, headerList)
        livebind_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(connectTimeout))
        if let timeout { livebind_curl_set_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(timeout)) }
        if let caFile { livebind_curl_set_pointer(easy, CURLOPT_CAINFO, caFile) }
        if method == "HEAD" {
            livebind_curl_set_long(easy, CURLOPT_NOBODY, 1)
        } else if method != "GET" || body != nil {
            // A POST, PUT or PATCH says its length even when it has no body (`Content-Length: 0`).
            if let body = body ?? (["POST", "PUT", "PATCH"].contains(method) ? [] : nil) {
                livebind_curl_set_large(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
                // Copied by libcurl (the size set first); an empty body still needs an address.
                (body.isEmpty ? [0] : body).withUnsafeBytes { _ = livebind_curl_set_pointer(easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
            }
            livebind_curl_set_pointer(easy, CURLOPT_CUSTOMREQUEST, method)
        }
        livebind_curl_set_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().receivedHeader(data!, size * count)
        }
        livebind_curl_set_pointer(easy, CURLOPT_HEADERDATA, context)
        livebind_curl_set_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().received(data!, size * count)
        }
        livebind_curl_set_pointer(easy, CURLOPT_WRITEDATA, context)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    /// Starts the transfer and waits for the answer's head; a cancelled task ends the transfer.
    func start() async throws -> Head {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let cancelled = state.withLock { state in
                    if !state.cancelled { state.waiting = continuation }
                    return state.cancelled
                }
                if cancelled { continuation.resume(throwing: CancellationError()) } else { CurlLoop.shared.start(self) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The body as it arrives; reading it lets a paused transfer go on, and cancelling the reading task
    /// ends the transfer (so does ``cancel()``, which ``HTTPStream`` calls when let go of).
    var chunks: Chunks { Chunks(transfer: self, owner: nil) }

    func cancel() {
        state.withLock { $0.cancelled = true }
        CurlLoop.shared.cancel(self)
    }

    /// Reads the whole body, at most `maxBytes` (more ends the transfer and throws).
    func collect(upTo maxBytes: Int) async throws -> Data {
        var data = Data()
        for try await chunk in chunks {
            guard data.count + chunk.count <= maxBytes else {
                cancel()
                throw CurlBodyTooLarge(limit: maxBytes)
            }
            data.append(contentsOf: chunk)
        }
        return data
    }

    // MARK: On the loop's thread

    /// Bytes handed to the body and not read yet.
    var unreadBytes: Int { state.withLock { $0.unread } }

    /// Whether the loop should not start it: it was cancelled before it could.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Whether no line arrived for longer than ``silence`` while the transfer was not paused.
    func isSilent(at now: ContinuousClock.Instant) -> Bool {
        guard let silence else { return false }
        return state.withLock { !$0.paused && now - $0.lastLine > silence }
    }

    /// How the transfer ended (nil: the whole answer arrived).
    func finish(_ error: (any Error)?) {
        let waiting = state.withLock { state -> CheckedContinuation<Head, any Error>? in
            state.complete = error == nil
            defer { state.waiting = nil }
            return state.waiting
        }
        if let waiting {
            // Ended before its head was complete: a failure, or an answer with no final head.
            if let error { waiting.resume(throwing: error) } else { waiting.resume(throwing: CurlError(CURLE_GOT_NOTHING)) }
        }
        if let error { bodyInput.finish(throwing: error) } else { bodyInput.finish() }
    }

    /// One header line: a status line starts a head, an empty line ends it (the final one, 200 or
    /// more, is the answer's; an interim 1xx is dropped).
    private func receivedHeader(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let status = line.isEmpty ? livebind_curl_response_code(easy) : 0
        let ready = state.withLock { state -> (Head, CheckedContinuation<Head, any Error>?)? in
            state.lastLine = .now
            guard line.isEmpty else {
                if line.hasPrefix("HTTP/") { state.lines = [] }
                state.lines.append(line)
                return nil
            }
            guard status >= 200, state.head == nil else { return nil }
            let headers = state.lines.dropFirst().compactMap { line -> (name: String, value: String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let head = Head(status: status, headers: headers)
            state.head = head
            defer { state.waiting = nil }
            return (head, state.waiting)
        }
        if let (head, waiting) = ready { waiting?.resume(returning: head) }
        return count
    }

    /// A part of the body: handed to the reader, or refused for now (the transfer pauses) while
    /// `bufferLimit` bytes wait for it.
    private func received(_ data: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        let endsLine = memchr(data, 0x0A, count) != nil || memchr(data, 0x0D, count) != nil
        let pause = state.withLock { state in
            if state.unread >= bufferLimit {
                state.paused = true
                return true
            }
            state.unread += count
            if endsLine { state.lastLine = .now }
            return false
        }
        if pause { return livebind_curl_write_pause() }
        bodyInput.yield(Array(UnsafeRawBufferPointer(start: data, count: count)))
        return count
    }

    /// The reader took `count` bytes.
    fileprivate func read(_ count: Int) {
        let resume = state.withLock { state in
            state.unread -= count
            guard state.paused && state.unread < bufferLimit / 2 else { return false }
            // The server had no chance to speak while paused: its silence counts from here.
            state.paused = false
            state.lastLine = .now
            return true
        }
        if resume { CurlLoop.shared.resume(self) }
    }

    /// The body's chunks as an async sequence (see ``chunks``). A body cut off by the reading task's
    /// cancellation throws `CancellationError` rather than end as if whole. `owner` is kept alive
    /// while the sequence is (the ``HTTPStream`` that ends the transfer when let go of).
    struct Chunks: AsyncSequence {
        let transfer: CurlTransfer
        var owner: AnyObject?

        func makeAsyncIterator() -> Iterator {
            Iterator(transfer: transfer, owner: owner, base: transfer.body.makeAsyncIterator())
        }

        struct Iterator: AsyncIteratorProtocol {
            let transfer: CurlTransfer
            let owner: AnyObject?
            var base: AsyncThrowingStream<[UInt8], any Error>.Iterator

            mutating func next() async throws -> [UInt8]? {
                let chunk = try await withTaskCancellationHandler {
                    try await base.next()
                } onCancel: { [transfer] in
                    transfer.cancel()
                }
                guard let chunk else {
                    // The stream also ends, without an error, when the reading task is cancelled.
                    guard transfer.state.withLock({ $0.complete }) else { throw CancellationError() }
                    return nil
                }
                transfer.read(chunk.count)
                return chunk
            }
        }
    }
}

/// An answer's body was larger than the reader allowed.
struct CurlBodyTooLarge: Error, CustomStringConvertible {
    let limit: Int
    var description: String { "the answer's body is larger than \(limit) bytes" }
}
