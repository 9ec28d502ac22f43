import LiveBind
import Logging
import Synchronization

/// What the executable runs besides the server: the models from `--config`, and the demo.
final class Application: Sendable {
    let store: Store
    let logger: Logger
    private let demoTask = Mutex<Task<Void, Never>?>(nil)

    /// Loads `configFile` (models and bindings) into `store`, if given.
    init(store: Store, configFile: String?, logger: Logger) throws {
        self.store = store
        self.logger = logger
        if let configFile { try ConfigFile.load(configFile, into: store, logger: logger) }
    }

    /// Creates the demo models and changes them every second until `stop()`.
    func startDemo() {
        let demo = Demo(store: store, logger: logger)
        do {
            try demo.install()
        } catch {
            logger.error("demo could not start: \(error)")
            return
        }
        let task = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                demo.tick()
            }
        }
        demoTask.withLock { $0 = task }
        logger.info("demo running: models sensor, readings, orders change every second")
    }

    /// Stops the demo.
    func stop() {
        demoTask.withLock { $0?.cancel() }
    }
}
