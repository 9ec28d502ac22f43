import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What an event stream's connection delivers, in order.
enum StreamChunk: Sendable {
    /// The answer's status and headers (lower-cased names); its body follows as `bytes`.
    case head(status: Int, headers: [String: String])
    case bytes(Data)
}

/// One `GET /events` as a stream of chunks, read through a `URLSession` delegate (which hands each
/// chunk over as it arrives, on every platform). `cancel()` ends it at once; so does the end of the
/// consuming loop. Each connection has a session of its own, invalidated when it ends.
final class EventConnection: NSObject, URLSessionDataDelegate, Sendable {
    let chunks: AsyncThrowingStream<StreamChunk, any Error>
    private let continuation: AsyncThrowingStream<StreamChunk, any Error>.Continuation
    private let task = Mutex<URLSessionDataTask?>(nil)

    init(_ request: URLRequest, configuration: URLSessionConfiguration) {
        (chunks, continuation) = AsyncThrowingStream.makeStream(of: StreamChunk.self)
        super.init()
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        let dataTask = session.dataTask(with: request)
        task.withLock { $0 = dataTask }
        continuation.onTermination = { [weak self] _ in self?.cancel() }
        dataTask.resume()
        session.finishTasksAndInvalidate()
    }

    /// Ends the connection; the stream of chunks finishes with an error.
    func cancel() {
        task.withLock { $0 }?.cancel()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        continuation.yield(.head(status: http?.statusCode ?? 0, headers: http?.lowercasedHeaders ?? [:]))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield(.bytes(data))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        continuation.finish(throwing: error)
    }
}
