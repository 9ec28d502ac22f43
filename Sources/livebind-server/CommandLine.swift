import LiveBind
#if canImport(Glibc)
import Glibc
#endif

/// Reads `livebind-server`'s arguments against the declared settings: `--flag value`, `--flag=value`,
/// and `--flag` alone (or `--no-flag`) for the on/off ones; the last one given wins. Every setting is
/// parsed, checked and listed in `--help` from its one declaration (``Setting``).
enum CommandLine {
    /// What the arguments ask for.
    enum Parsed {
        case help
        case version
        case run(LiveBindServer.Configuration, CommandOptions)
    }

    /// One of the three lists a flag may come from.
    private enum Found {
        case server(Setting<LiveBindServer.Configuration>)
        case command(Setting<CommandOptions>)
        case cluster(Setting<ClusterConfiguration>)
    }

    static func parse(_ arguments: [String]) throws(ConfigurationError) -> Parsed {
        var configuration = LiveBindServer.Configuration()
        var options = CommandOptions()
        var cluster = ClusterConfiguration(servers: [], nodeName: "")
        var clusterGiven: [String] = []
        /// Sets one option to `value` (`on`/`off` for an on/off flag).
        func apply(_ found: Found, _ name: String, _ value: String) throws(ConfigurationError) {
            options.given.insert(name)
            switch found {
            case .server(let setting): try setting.set(value, in: &configuration)
            case .command(let setting): try setting.set(value, in: &options)
            case .cluster(let setting):
                try setting.set(value, in: &cluster)
                clusterGiven.append(name)
            }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "--help", "-h": return .help
            case "--version": return .version
            default: break
            }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ConfigurationError(flag: "'\(argument)'", reason: "is not an option (they start with --; --help lists them)")
            }
            let body = argument.dropFirst(2)
            var name = String(body.prefix { $0 != "=" })
            var attached = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
            // `--no-X` turns off an on/off setting `X`.
            if find(name) == nil, name.hasPrefix("no-"), attached == nil, let found = find(String(name.dropFirst(3))),
                !takesValue(found)
            {
                name = String(name.dropFirst(3))
                attached = "off"
            }
            guard let found = find(name) else {
                throw ConfigurationError(flag: name, reason: "is not an option (--help lists them)")
            }
            var value = attached ?? "on"
            if takesValue(found) && attached == nil {
                guard index < arguments.count else { throw ConfigurationError(flag: name, reason: "needs a value") }
                value = arguments[index]
                index += 1
            }
            try apply(found, name, value)
            // A settings file's options apply where it stands, as if given there.
            if name == SettingsFile.flag {
                for (written, given) in try SettingsFile.entries(value) {
                    var key = written
                    var setting = given
                    // `no-X` turns off an on/off setting `X`, as on the command line.
                    if find(key) == nil, key.hasPrefix("no-"), let found = find(String(key.dropFirst(3))), !takesValue(found) {
                        key = String(key.dropFirst(3))
                        setting = SettingsFile.negated(given)
                    }
                    guard let found = find(key) else {
                        throw ConfigurationError(flag: name, reason: "file '\(value)': \(written) is not an option (--help lists them)")
                    }
                    if takesPath(found) { setting = SettingsFile.resolve(setting, from: value) }
                    do {
                        try apply(found, key, setting)
                    } catch {
                        throw ConfigurationError(flag: key, reason: error.reason + " (in --settings '\(value)')")
                    }
                }
            }
        }
        try options.validate()
        if options.cluster != nil {
            cluster.servers = options.clusterServers
            if cluster.nodeName.isEmpty { cluster.nodeName = defaultNodeName(port: configuration.network.port) }
            configuration.cluster = cluster
        } else if let name = clusterGiven.first {
            throw ConfigurationError(flag: name, reason: "needs --cluster")
        }
        try configuration.validate()
        return .run(configuration, options)
    }

    private static func takesValue(_ found: Found) -> Bool {
        switch found {
        case .server(let setting): setting.valueName != nil
        case .command(let setting): setting.valueName != nil
        case .cluster(let setting): setting.valueName != nil
        }
    }

    /// Whether the setting takes a file or folder name (resolved against a settings file's folder).
    private static func takesPath(_ found: Found) -> Bool {
        let unit: String? =
            switch found {
            case .server(let setting): setting.valueName
            case .command(let setting): setting.valueName
            case .cluster(let setting): setting.valueName
            }
        return unit == "FILE" || unit == "DIR"
    }

    private static func find(_ name: String) -> Found? {
        if let setting = LiveBindServer.Configuration.settings.first(where: { $0.flag == name }) { return .server(setting) }
        if let setting = CommandOptions.settings.first(where: { $0.flag == name }) { return .command(setting) }
        if let setting = ClusterConfiguration.settings.first(where: { $0.flag == name }) { return .cluster(setting) }
        return nil
    }

    /// `<hostname>:<port>`.
    private static func defaultNodeName(port: Int) -> String {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + ":\(port)"
    }

    /// `--help`: every option by group, with its default and the values it takes.
    static let help: String = {
        var text = """
            livebind-server \(LiveBindVersion.string): serve live JSON models over HTTP, with changes streamed as Server-Sent Events.

            Usage: livebind-server [--option value ...]

            Without --config the built-in demo runs (models that change every second). See docs/HTTP.md.

            """
        let defaults = LiveBindServer.Configuration()
        var rows: [(group: String, flag: String, text: String)] = []
        func add<Root>(_ settings: [Setting<Root>], _ defaults: Root) {
            for setting in settings {
                var notes: [String] = []
                let value = setting.value(in: defaults)
                if setting.valueName != nil, value != "none" { notes.append("default: \(value)") }
                if let rule = setting.rule { notes.append(rule) }
                let flag = "--" + setting.flag + (setting.valueName.map { " " + $0 } ?? "")
                rows.append((setting.group, flag, setting.help + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")")))
            }
        }
        let first = ["Options", "Models"]
        add(CommandOptions.settings.filter { first.contains($0.group) }, CommandOptions())
        add(LiveBindServer.Configuration.settings, defaults)
        add(CommandOptions.settings.filter { !first.contains($0.group) }, CommandOptions())
        add(ClusterConfiguration.settings, ClusterConfiguration(servers: [], nodeName: ""))
        var groups: [String] = []
        for row in rows where !groups.contains(row.group) { groups.append(row.group) }
        for group in groups {
            text += "\n\(group):\n"
            for row in rows where row.group == group {
                let padded =
                    row.flag.count < 34
                    ? row.flag + String(repeating: " ", count: 34 - row.flag.count) : row.flag + "\n" + String(repeating: " ", count: 36)
                text += "  \(padded)\(row.text)\n"
            }
        }
        text += "\n  --help                            Show this text.\n  --version                         Show the version.\n"
        return text
    }()

    /// Prints `message` (and where to find the options) on standard error and exits with 64 (EX_USAGE).
    static func fail(_ message: String, usage: Bool = true) -> Never {
        var text = "Error: \(message)\n"
        if usage { text += "Usage: livebind-server [--option value ...] (--help lists them)\n" }
        _ = Array(text.utf8).withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        exit(usage ? 64 : 1)
    }
}
