import LiveBind
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `--config FILE`: a JSON file of models (and, once bindings exist, bindings) loaded at start.
enum ConfigFile {
    /// Why a config file could not be used.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func load(_ path: String, into store: Store, logger: Logger) throws {
        guard let bytes = readAll(path) else { throw Failure(description: "cannot read --config file '\(path)'") }
        let json: JSON
        do { json = try JSON(parsing: bytes) } catch {
            throw Failure(description: "--config file '\(path)' is not valid JSON: \(error)")
        }
        guard case .object(let members) = json, case .object(let models)? = members["models"] else {
            throw Failure(description: "--config file '\(path)' must be an object with \"models\": {name: value}")
        }
        for (name, value) in models {
            do { try store.put(name, value) } catch {
                throw Failure(description: "--config file '\(path)': model '\(name)': \(error)")
            }
        }
        logger.info("loaded \(models.count) models from \(path)")
    }

    /// The whole file, or nil. The corresponding C functions are `fopen` and `fread`.
    static func readAll(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count > 0 { bytes += chunk.prefix(count) }
            if count < chunk.count { break }
        }
        return ferror(file) == 0 ? bytes : nil
    }
}
