import Foundation
import LiveBindEngine
internal import LiveBindHTTP
import Logging

extension PresenceRooms {
    /// An entry's `onDisconnect` writes: a body as `PATCH /models` takes, applied when the entry
    /// leaves other than by its own `DELETE`, as the credential that registered them.
    struct DisconnectWrites: Sendable {
        /// `{model: {"merge": …} or {"patch": […]}, …}`, as sent (parsed again when applied: what
        /// the registrations hold is the bytes `--max-disconnect-bytes` counts).
        let body: [UInt8]
        /// Who registered them: the audit trail names it (route `disconnect`).
        let actor: String?
        /// The models the registering credential reaches, checked again when they are applied.
        let reach: AccessControl.Reach
        /// When that credential ends: past it, the writes are not applied.
        let expiresAt: Date?
        /// The session that registered them, if one did: they are dropped when it ends.
        let session: SessionTable.Key?
    }
}

extension PresenceRooms.DisconnectWrites {
    /// Applies the writes as the credential that registered them (route `disconnect` in the audit
    /// trail), unless that credential has ended; what no longer applies (a model gone, a failing
    /// `test`) is logged, and none of it written.
    func apply(to store: Store, logger: Logger) {
        if let ends = expiresAt, ends <= Date() {
            logger.notice("disconnect writes of \(actor ?? "anonymous") not applied: its credential has ended")
            return
        }
        do {
            try Store.$commitOrigin.withValue(CommitOrigin(actor: actor ?? "anonymous", route: "disconnect")) {
                let parsed = try JSON(parsing: body)
                let edits = try ModelEndpoint.severalEdits(parsed, reach: reach, store: store)
                _ = try ModelEndpoint.write(edits, to: store)
            }
        } catch {
            logger.notice("disconnect writes of \(actor ?? "anonymous") not applied: \(Problem.from(error).detail)")
        }
    }
}
