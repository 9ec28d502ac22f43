import LiveBind
import Logging
import Synchronization

/// What the executable runs besides the server: the binding set from `--config`, and the demo.
final class Application: Sendable {
    let registry: BindingRegistry
    let logger: Logger
    private struct Parts: Sendable {
        var sets: [BindingSet] = []
        var demo: Task<Void, Never>?
    }
    private let parts = Mutex(Parts())

    /// Loads `configFile` (models and bindings) into the registry's store, if given.
    init(registry: BindingRegistry, configFile: String?, logger: Logger) throws {
        self.registry = registry
        self.logger = logger
        if let configFile {
            let set = try ConfigFile.load(configFile, into: registry, logger: logger)
            parts.withLock { $0.sets.append(set) }
        }
    }

    /// Creates the demo models (those missing) and bindings, and changes the models every second until `stop()`.
    func startDemo() {
        let demo = Demo(store: registry.store, logger: logger)
        let set: BindingSet
        do {
            set = try BindingSet(
                definition: Self.keepingExistingModels(Demo.definition, in: registry.store),
                registry: registry)
        } catch {
            logger.error("demo could not start: \(error)")
            return
        }
        demo.continueFromStore()
        let task = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if !Task.isCancelled { demo.tick() }
            }
        }
        parts.withLock {
            $0.sets.append(set)
            $0.demo = task
        }
        logger.info("demo running: models sensor, readings and orders change every second; \(set.bindings.count) bindings")
    }

    /// `definition` without the models the store already has: a restart with a data directory keeps
    /// their values instead of resetting them to the initial ones.
    static func keepingExistingModels(_ definition: JSON, in store: Store) -> JSON {
        guard case .object(var members) = definition, case .object(var models)? = members["models"] else {
            return definition
        }
        for existing in store.modelNames() { models.removeValue(forKey: existing.name) }
        members["models"] = .object(models)
        return .object(members)
    }

    /// Stops the demo.
    func stop() {
        parts.withLock { $0.demo?.cancel() }
    }
}
