import Synchronization
@testable import LiveBind

/// Collects observer events behind a lock, for tests.
final class EngineRecorder<Event: Sendable>: Sendable {
    private let storage = Mutex<[Event]>([])

    /// The handler to register.
    var handler: @Sendable (Event) -> Void {
        { [self] event in storage.withLock { $0.append(event) } }
    }

    /// Everything recorded so far.
    var events: [Event] {
        storage.withLock { $0 }
    }
}

/// Parses a JSON literal written as text, for tests.
func json(_ text: String) throws -> JSON {
    try JSON(parsing: text)
}

/// Parses a dotted path, for tests.
func path(_ dotted: String) throws -> Path {
    try Path(dotted: dotted)
}
