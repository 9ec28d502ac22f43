import Collections
import Foundation
extension Mirror {
    /// Moves a window target (not a view) with `PATCH /events/{stream}`: `offset` and `limit`, or
    /// `first`, or `last`. The stream then restates the window where it is now, and a reconnect asks
    /// for it there. Throws the server's refusal, or `invalidTarget` for a view or a bad window.
    public func moveWindow(_ target: MirrorTarget, offset: Int? = nil, limit: Int? = nil, first: Int? = nil,
                           last: Int? = nil) async throws(LiveBindClientError)
    {
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
        guard let stream = state.withLock({ $0.streamID }) else {
            throw .unreachable("the mirror's stream is not open")
        }
        let request = client.transport.request("PATCH", "/events/\(stream)", headers: ["Content-Type": "application/json"])
        let answer: HTTPAnswer
        do {
            answer = try await client.transport.send(request, body: Data(JSON.object(body).encoded()))
        } catch {
            throw .unreachable(String(describing: error))
        }
        guard answer.status < 300 else { throw .refusal(answer) }
        state.withLock { $0.windowParameters[index] = parameters }
    }
}
