import LiveBindEngine
internal import LiveBindHTTP
extension EventHub {
    /// Ends streams `ids` with an `auth_revoked` event: each finishes the frame it is in the middle of
    /// sending, drops everything else it holds (nothing more reaches a client whose credential ended),
    /// sends `auth_revoked` and ends. Ids of streams already closed are skipped.
    func revoke(_ ids: some Sequence<Int>, reason: String) {
        let wake: [any HTTPStreamConnection] = state.withLock { state in
            var wake: [any HTTPStreamConnection] = []
            for id in ids { revoke(id, reason: reason, in: &state, waking: &wake) }
            return wake
        }
        for connection in wake { connection.resume() }
    }

    /// Ends, as `revoke` does, every stream opened with one of `sessions`.
    func revoke(sessions: Set<SessionTable.Key>, reason: String) {
        let wake: [any HTTPStreamConnection] = state.withLock { state in
            var wake: [any HTTPStreamConnection] = []
            let ids = state.subscribers.compactMap { id, subscriber in
                subscriber.session.map(sessions.contains) == true ? id : nil
            }
            for id in ids { revoke(id, reason: reason, in: &state, waking: &wake) }
            return wake
        }
        for connection in wake { connection.resume() }
    }

    private func revoke(_ id: Int, reason: String, in state: inout State, waking wake: inout [any HTTPStreamConnection]) {
        guard let subscriber = state.subscribers[id], !subscriber.isRevoked, !subscriber.isCut else { return }
        subscriber.isRevoked = true
        subscriber.preface = [EventFrame(sequence: 0, model: nil, isCommit: false, bytes: EventEncoder.authRevoked(reason))]
        state.metrics.authRevoked += 1
        if state.suspended.contains(id) {
            state.suspended.remove(id)
            if let connection = subscriber.connection { wake.append(connection) }
        }
    }
}
