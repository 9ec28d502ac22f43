import Foundation
import LiveBindEngine

// Changes to the bindings made over HTTP, carried by the stream (subject `<stream>.bindings`).
extension ClusterNode {
    /// Keeps `change` in the list of bindings made over HTTP that snapshots carry.
    func record(_ change: ClusterBindingChange) {
        switch change {
        case .create(let id, let definition):
            httpBindings.removeAll { $0.id == id }
            httpBindings.append((id, definition, true))
        case .setEnabled(let id, let enabled):
            if let index = httpBindings.firstIndex(where: { $0.id == id }) { httpBindings[index].enabled = enabled }
        case .delete(let id):
            httpBindings.removeAll { $0.id == id }
        }
    }

    /// Sets what applies other nodes' binding changes to this node's registry. Call before ``start()``.
    func setBindingHandler(_ handler: @escaping @Sendable (ClusterBindingChange, _ tag: String?, _ sequence: UInt64) -> Void) {
        bindingHandler.withLock { $0 = handler }
    }

    /// Sets what catches up the bindings whose derived commits the stream refused (run on the turn
    /// thread; the catch-up's commits go to the stream in the same turn). Call before ``start()``.
    func setCatchUpHandler(_ handler: @escaping @Sendable ([Commit]) -> Void) {
        catchUpHandler.withLock { $0 = handler }
    }

    /// Puts `change` in the stream before the write that makes it applies it here: called on the turn
    /// thread by a write (`/bindings`) once it checked the change. Throws when the stream does not take
    /// it; when another node's message came first, the turn runs the write again once this node has
    /// applied that message. `tag`: the idempotency tag of the request (see `AnswerReceipt`), which
    /// every node gets with the change. Returns the stream's sequence of the change.
    @discardableResult
    func publishBindingChange(_ change: ClusterBindingChange, tag: String? = nil) throws(ClusterError) -> UInt64 {
        guard turns.withLock({ appended.isEmpty }) else {
            runAgain = .now
            throw .unavailable("commits of this node were not in the stream yet")
        }
        messageCounter += 1
        let expected = applied.load(ordering: .relaxed)
        let (headers, body) = change.message
        let all =
            headers + (tag.map { [(ClusterBindingChange.tagHeader, $0)] } ?? []) + [
                ("Nats-Msg-Id", "\(configuration.nodeName)-\(bootID)-\(messageCounter)"),
                ("Nats-Expected-Last-Sequence", String(expected))
            ]
        let size = NATSConnection.messageSize(headers: all, bodyCount: body.count)
        if size > nats.maxPayload { throw .tooLarge(bytes: size, limit: nats.maxPayload) }
        while true {
            let left = Int64(Self.seconds(turnDeadline - .now) * 1000)
            guard left > 0 else { throw .unavailable("no answer from the stream in \(configuration.writeTimeout)") }
            switch nats.publish(bindingSubject, headers: all, body: body, timeout: min(2000, left)) {
            case .stored(let sequence, _):
                guard sequence == expected + 1 else {
                    diverge("binding change \(change.id) was stored at \(sequence), not \(expected + 1)")
                    throw .diverged("binding change stored out of order")
                }
                markApplied(sequence)
                changedBindings = true
                if streamLast.load(ordering: .relaxed) < sequence { streamLast.store(sequence, ordering: .relaxed) }
                record(change)
                return sequence
            case .wrongLastSequence:
                runAgain = .afterDelivery
                throw .unavailable("another node wrote first")
            case .unavailable(let reason):
                if ContinuousClock.now + .milliseconds(100) >= turnDeadline { throw .unavailable(reason) }
                Thread.sleep(forTimeInterval: 0.1)
            case .refused(let reason):
                throw .unavailable(reason)
            }
        }
    }

    /// Where binding changes are published.
    var bindingSubject: String { configuration.stream + ".bindings" }
}
