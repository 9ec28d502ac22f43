import CCurl
import Foundation

/// The one thread that runs every transfer of the process: a libcurl multi handle (one connection
/// cache, so requests to a server reuse their connections) driven by `curl_multi_poll`.
///
/// A libcurl handle is used by one thread at a time: a transfer's handle is set up by the task that
/// makes it, then belongs to this thread from ``start(_:)`` until it ends. Other threads reach a
/// running transfer only through the commands here (start, cancel, resume), which wake the poll.
final class CurlLoop: @unchecked Sendable {
    static let shared = CurlLoop()

    private enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
        case resume(CurlTransfer)
    }

    private let multi: UnsafeMutableRawPointer
    private let commands = OrderedMutex<[Command]>([])
    /// The transfers in the multi handle, by their easy handle: read and changed on the loop's thread only.
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// When the running transfers were last checked for silence (loop's thread only).
    private var silenceChecked = ContinuousClock.now

    private init() {
        curl_global_init(Int(CURL_GLOBAL_ALL))
        multi = curl_multi_init()!
        let thread = Thread { [self] in run() }
        thread.name = "livebind-curl"
        thread.start()
    }

    func start(_ transfer: CurlTransfer) { send(.start(transfer)) }

    /// Ends `transfer` (its body and answer fail with `CancellationError`) unless it ended already.
    func cancel(_ transfer: CurlTransfer) { send(.cancel(transfer)) }

    /// Lets a transfer that paused for its reader go on.
    func resume(_ transfer: CurlTransfer) { send(.resume(transfer)) }

    private func send(_ command: Command) {
        commands.withLock { $0.append(command) }
        curl_multi_wakeup(multi)
    }

    private func run() {
        while true {
            let batch = commands.withLock { list in
                let taken = list
                list.removeAll()
                return taken
            }
            for command in batch {
                switch command {
                case .start(let transfer) where transfer.isCancelled:
                    transfer.finish(CancellationError())
                case .start(let transfer):
                    running[transfer.easy] = transfer
                    if curl_multi_add_handle(multi, transfer.easy) != CURLM_OK {
                        running[transfer.easy] = nil
                        transfer.finish(CurlError(CURLE_FAILED_INIT))
                    }
                case .cancel(let transfer):
                    end(transfer.easy, with: CancellationError())
                case .resume(let transfer):
                    if running[transfer.easy] != nil { livebind_curl_resume(transfer.easy) }
                }
            }
            var active: Int32 = 0
            curl_multi_perform(multi, &active)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let result = message.pointee.data.result
                end(easy, with: result == CURLE_OK ? nil : CurlError(result))
            }
            endSilentTransfers()
            // Waits for a socket, a timeout of libcurl's, or a command's wakeup; a failing poll must
            // not turn this into a busy loop.
            if curl_multi_poll(multi, nil, 0, 1000, nil) != CURLM_OK { usleep(10_000) }
        }
    }

    /// Ends, at most every 200 ms, the transfers that went without a line for longer than their
    /// ``CurlTransfer/silence`` (the poll wakes at least every second).
    private func endSilentTransfers() {
        let now = ContinuousClock.now
        guard now - silenceChecked >= .milliseconds(200) else { return }
        silenceChecked = now
        let silent = running.filter { $0.value.silence != nil && $0.value.isSilent(at: now) }.keys
        for easy in silent { end(easy, with: CurlError(CURLE_OPERATION_TIMEDOUT)) }
    }

    /// Takes a transfer out of the multi handle and tells its reader how it ended.
    private func end(_ easy: UnsafeMutableRawPointer, with error: (any Error)?) {
        guard let transfer = running.removeValue(forKey: easy) else { return }
        curl_multi_remove_handle(multi, easy)
        transfer.finish(error)
    }
}

/// A transfer libcurl could not complete: no connection, TLS refused, a timeout, a lost answer.
struct CurlError: Error, CustomStringConvertible {
    let code: CURLcode

    init(_ code: CURLcode) { self.code = code }

    var description: String { String(cString: curl_easy_strerror(code)) }
}
