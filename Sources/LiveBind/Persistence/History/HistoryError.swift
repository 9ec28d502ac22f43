import LiveBindEngine
/// Why a history query has no answer; each says what to do.
enum HistoryError: Error, Equatable, CustomStringConvertible {
    /// The server keeps no history (no `--data`, or `--history 0`).
    case off
    /// Every reader connection is in use.
    case busy
    /// The time or event asked for is before the oldest the history keeps (`--history`).
    case before(oldest: String)
    /// The answer would pass a limit: which (`--flag`), its value, and what the query would need.
    case limit(flag: String, limit: Int, needed: String)
    /// The file holds something this code cannot read.
    case unreadable(String)

    var description: String {
        switch self {
        case .off: "this server keeps no history: start it with --data DIR (and --history other than 0)"
        case .busy: "every history reader is busy; retry in a moment"
        case .before(let oldest): "the history kept (--history) starts at \(oldest)"
        case .limit(let flag, let limit, let needed): "\(needed); the limit is \(limit) (--\(flag))"
        case .unreadable(let reason): "the history cannot be read: \(reason)"
        }
    }
}
