import LiveBindEngine

/// The models a data directory does not keep: presence rooms (`presence-{room}`), which live only
/// as long as the connections in them.
///
/// Their commits pass through the log like any other, so that they become visible and reach the
/// streams in order with the rest, but the state file keeps only their drops (a room's end: a stream
/// resuming after a restart from when the room was open learns it is gone) and the history none. The
/// sequence the others took is kept (`meta.last_event`), so event ids never go back after a restart.
enum EphemeralModels {
    /// The name prefix of every presence room's model.
    static let prefix = "presence-"

    /// Whether the data directory leaves `model` out.
    static func contains(_ model: String) -> Bool { model.hasPrefix(prefix) }

    /// Whether the state file's log keeps `commit`: every commit but an ephemeral model's, except its drop.
    static func logs(_ commit: Commit) -> Bool {
        if case .drop = commit.kind { return true }
        return !contains(commit.model)
    }
}
