import OrderedCollections
import Foundation
extension ServerMirror {
    /// Moves a window target (not a view) with `PATCH /events/{stream}`: `offset` and `limit`, or
    /// `first`, or `last`. The stream then restates the window where it is now, and a reconnect asks
    /// for it there; while the server cannot be reached the move waits for the next stream. Throws the
    /// server's refusal (the window stays), or `invalidTarget` for a view or a bad window.
    public func moveWindow(
        _ target: MirrorTarget, offset: Int? = nil, limit: Int? = nil, first: Int? = nil,
        last: Int? = nil
    ) async throws(LiveBindClientError) {
        guard let index = targets.firstIndex(of: target), target.showsRows, !target.isView else {
            throw .invalidTarget("\(target.sub): only a window this mirror holds can move (a view cannot)")
        }
        var body: OrderedDictionary<String, JSON> = ["sub": .string(target.location)]
        let parameters: String
        switch (offset, limit, first, last) {
        case (let offset, let limit?, nil, nil) where limit > 0 && (offset ?? 0) >= 0:
            body["offset"] = .int(offset ?? 0)
            body["limit"] = .int(limit)
            parameters = "offset=\(offset ?? 0);limit=\(limit)"
        case (nil, nil, let first?, nil) where first > 0:
            body["first"] = .int(first)
            parameters = "first=\(first)"
        case (nil, nil, nil, let last?) where last > 0:
            body["last"] = .int(last)
            parameters = "last=\(last)"
        default:
            throw .invalidTarget("a window is first=N, last=N, or offset=K with limit=N (N at least 1)")
        }
        // Without an open stream, or when the server cannot be reached or no longer has the stream
        // (404), the next stream asks for the window there.
        guard let stream = state.withLock({ $0.streamID }) else { return reopen(index, parameters) }
        let request = client.transport.request("PATCH", "/events/\(stream)", headers: ["Content-Type": "application/json"])
        let answer: HTTPAnswer
        do {
            answer = try await client.transport.send(request, body: JSON.object(body).encoded())
        } catch {
            return reopen(index, parameters)
        }
        if answer.status == 404 { return reopen(index, parameters) }
        guard answer.status < 300 else { throw .refusal(answer) }
        state.withLock { $0.windowParameters[index] = parameters }
    }

    private func reopen(_ index: Int, _ parameters: String) {
        state.withLock { $0.windowParameters[index] = parameters }
        let connection = state.withLock { $0.connection }
        connection?.cancel()
    }
}
