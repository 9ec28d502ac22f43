import LiveBind

/// `--settings FILE`: options from a JSON object instead of the command line, read where the flag
/// stands (options after it win, as with any option given twice).
///
/// Each member names an option by its flag without dashes, as `--help` lists them:
/// `{"port": 8080, "data": "/var/lib/livebind", "private": true, "token": ["…", "…"]}`. A string,
/// number or boolean is the option's value (`true`/`false` turn an on/off option on or off); an array
/// gives a repeatable option each of its values; `no-X` turns the on/off option `X` off, as `--no-X`
/// does. The same checks apply as on the command line, and a key given twice is refused. A relative
/// path (an option taking a FILE or DIR) is resolved against the file's folder.
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
        if let twice = firstRepeatedKey(bytes) {
            throw refusal("\(twice) is given twice: give each option once (an array repeats a repeatable one)")
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

    /// The first key the top-level object of `bytes` (valid JSON) holds twice, nil when none is. A JSON
    /// parser keeps the last of them silently, so `{"private": true, "private": false}` would read as
    /// public reads.
    static func firstRepeatedKey(_ bytes: [UInt8]) -> String? {
        var seen: Set<String> = []
        var depth = 0
        var index = 0
        var expectsKey = false
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                expectsKey = byte == UInt8(ascii: "{") && depth == 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: ","):
                expectsKey = depth == 1
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                if expectsKey, let key = (try? JSON(parsing: bytes[start...min(index, bytes.count - 1)]))?.stringValue {
                    if !seen.insert(key).inserted { return key }
                    expectsKey = false
                }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// `value`, the path a settings file at `file` gives, resolved against the file's folder when it
    /// is relative: a file names the files beside it wherever the server starts.
    static func resolve(_ value: String, from file: String) -> String {
        guard !value.isEmpty, !value.hasPrefix("/"), let slash = file.lastIndex(of: "/") else { return value }
        return String(file[...slash]) + value
    }

    /// The on/off value of `--no-X` written as `text` in a file: `{"no-demo": true}` is `--no-demo`,
    /// `false` the opposite. Another text is passed on, for the option to refuse.
    static func negated(_ text: String) -> String {
        switch text {
        case "on", "true", "yes", "1": "off"
        case "off", "false", "no", "0": "on"
        default: text
        }
    }
}
