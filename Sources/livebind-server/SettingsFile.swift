import LiveBind

/// `--settings FILE`: options from a JSON object instead of the command line, read where the flag
/// stands (options after it win, as with any option given twice).
///
/// Each member names an option by its flag without dashes, as `--help` lists them:
/// `{"port": 8080, "data": "/var/lib/livebind", "private": true, "token": ["…", "…"]}`. A string,
/// number or boolean is the option's value (`true`/`false` turn an on/off option on or off); an array
/// gives a repeatable option each of its values. The same checks apply as on the command line.
enum SettingsFile {
    /// The flag that reads a settings file.
    static let flag = "settings"
    /// The largest settings file read.
    static let maxBytes = 1 << 20

    /// The file's options as (flag, value) pairs, in the file's order.
    static func entries(_ path: String) throws(ConfigurationError) -> [(String, String)] {
        func refusal(_ reason: String) -> ConfigurationError {
            ConfigurationError(flag: flag, reason: "file '\(path)': \(reason)")
        }
        guard let bytes = ConfigFile.readAll(path, limit: maxBytes) else {
            throw refusal("cannot be read, or is larger than \(maxBytes) bytes")
        }
        let document: JSON
        do { document = try JSON(parsing: bytes) } catch { throw refusal("not valid JSON: \(error)") }
        guard let members = document.objectValue else {
            throw refusal("must be a JSON object of options, such as {\"port\": 8080}")
        }
        var entries: [(String, String)] = []
        for (name, value) in members {
            guard name != flag, name != "help", name != "version" else {
                throw refusal("\(name) cannot be given in a settings file")
            }
            let values: [JSON]
            if case .array(let items) = value { values = Array(items) } else { values = [value] }
            for item in values {
                switch item {
                case .string(let text): entries.append((name, text))
                case .int(let number): entries.append((name, String(number)))
                case .double(let number): entries.append((name, String(number)))
                case .bool(let on): entries.append((name, on ? "on" : "off"))
                case .null, .array, .object:
                    throw refusal("\(name) takes a string, number or boolean (or an array of them), not \(item.typeName)")
                }
            }
        }
        return entries
    }
}
