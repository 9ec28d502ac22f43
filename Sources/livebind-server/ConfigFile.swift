import LiveBind
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `--config FILE`: a binding-set definition (`{"models": {...}, "bindings": [...]}`) loaded at start,
/// all or nothing.
enum ConfigFile {
    /// Why a config file could not be used.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Loads the file into the registry's store; the returned set keeps its bindings alive.
    static func load(_ path: String, into registry: BindingRegistry, logger: Logger) throws -> BindingSet {
        guard let bytes = readAll(path) else { throw Failure(description: "cannot read --config file '\(path)'") }
        let definition: JSON
        do { definition = try JSON(parsing: bytes) } catch {
            throw Failure(description: "--config file '\(path)': not valid JSON: \(error)")
        }
        do {
            let set = try BindingSet(
                definition: Application.keepingExistingModels(definition, in: registry.store),
                registry: registry)
            logger.info("loaded \(path): \(registry.store.modelNames().count) models, \(set.bindings.count) bindings")
            return set
        } catch {
            throw Failure(description: "--config file '\(path)': \(error)")
        }
    }

    /// The whole file, or nil (unreadable, or longer than `limit` bytes). The corresponding C functions
    /// are `fopen` and `fread`.
    static func readAll(_ path: String, limit: Int = .max) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count > 0 { bytes += chunk.prefix(count) }
            if bytes.count > limit { return nil }
            if count < chunk.count { break }
        }
        return ferror(file) == 0 ? bytes : nil
    }
}
