import Foundation
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// A value behind an `NSLock`, for tests. (`NSLock` is a pthread mutex, which the thread sanitizer
/// understands even when contended.)
final class TestLocked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Collects observer events behind a lock, for tests.
final class EngineRecorder<Event: Sendable>: Sendable {
    private let storage = TestLocked<[Event]>([])

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
