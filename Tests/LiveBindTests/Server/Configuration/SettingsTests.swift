import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Each setting is declared once (`Configuration.settings`); the library refuses what the command line
/// refuses, naming the flag, instead of clamping it.
@Suite("Settings") struct SettingsTests {
    @Test func theDefaultsAreValid() throws {
        try LiveBindServer.Configuration().validate()
        try ClusterConfiguration(servers: ["nats://127.0.0.1:4222"], nodeName: "a").validate()
    }

    @Test func everyFlagIsDeclaredOnce() {
        let flags = LiveBindServer.Configuration.settings.map(\.flag) + ClusterConfiguration.settings.map(\.flag)
        #expect(Set(flags).count == flags.count)
        #expect(flags.allSatisfy { $0.allSatisfy { $0 == "-" || ("a"..."z").contains($0) } })
    }

    /// Every bounded setting, set one past each end of its range, is refused by `validate()` and by
    /// `start()` with an error naming its flag; set to each end, it is taken.
    @Test func everyBoundIsCheckedByTheLibrary() throws {
        var checked = 0
        for setting in LiveBindServer.Configuration.settings {
            let range: ClosedRange<Int>
            switch setting.kind {
            case .integer(_, let bounds, _), .optionalInteger(_, let bounds, _, _): range = bounds
            default: continue
            }
            for (value, valid) in [(range.lowerBound, true), (range.upperBound, true)]
                + (range.lowerBound > Int.min ? [(range.lowerBound - 1, false)] : [])
                + (range.upperBound < Int.max ? [(range.upperBound + 1, false)] : [])
            {
                var configuration = LiveBindServer.Configuration()
                if valid {
                    try setting.set(String(value), in: &configuration)
                    #expect(setting.value(in: configuration) == String(value))
                    continue
                }
                #expect(throws: ConfigurationError.self) { try setting.set(String(value), in: &configuration) }
                switch setting.kind {
                case .integer(let path, _, _): configuration[keyPath: path] = value
                case .optionalInteger(let path, _, _, _): configuration[keyPath: path] = value
                default: break
                }
                do {
                    try configuration.validate()
                    Issue.record("--\(setting.flag) \(value) was taken")
                } catch {
                    #expect(error.flag == setting.flag)
                }
                checked += 1
            }
        }
        #expect(checked >= 30)
    }

    @Test func startRefusesWhatTheCommandLineRefuses() {
        var configuration = LiveBindServer.Configuration()
        configuration.network.port = 0
        configuration.streams.retainedEvents = 0
        let server = LiveBindServer(store: Store(), configuration: configuration)
        #expect(throws: ServerError.invalidConfiguration(ConfigurationError(flag: "retained-events", reason: "must be at least 1, not 0")))
        {
            try server.start()
        }
    }

    @Test func secondsAndNumbersAreBoundedBeforeTheyAreConverted() {
        var configuration = LiveBindServer.Configuration()
        for (flag, text) in [
            ("heartbeat", "1e300"), ("request-timeout", "-1"), ("write-rate", "1e300"), ("heartbeat", "nan"),
            ("session-lifetime", "0"), ("port", "99999999999999999999")
        ] {
            let setting = LiveBindServer.Configuration.settings.first { $0.flag == flag }!
            #expect(throws: ConfigurationError.self, "--\(flag) \(text)") { try setting.set(text, in: &configuration) }
        }
        #expect(throws: Never.self) { try configuration.validate() }
        // Seconds are kept in whole milliseconds: one that rounds to none is refused as it was given.
        let heartbeat = LiveBindServer.Configuration.settings.first { $0.flag == "heartbeat" }!
        #expect(throws: ConfigurationError(flag: "heartbeat", reason: "takes whole milliseconds, at least 0.001 seconds, not 0.0004")) {
            try heartbeat.set("0.0004", in: &configuration)
        }
        #expect(throws: Never.self) { try heartbeat.set("0.0006", in: &configuration) }
        #expect(configuration.streams.heartbeat == .milliseconds(1))
    }

    @Test func clusterSettingsGoTogether() {
        var cluster = ClusterConfiguration(servers: ["nats://127.0.0.1:4222"], nodeName: "a")
        cluster.maxCommits = Int.max
        cluster.snapshotInterval = Int.max / 2
        #expect(
            throws: ConfigurationError(flag: "cluster-max-commits", reason: "needs snapshots: at least 3 times --cluster-snapshot-interval")
        ) {
            try cluster.validate()
        }
        var configuration = LiveBindServer.Configuration()
        configuration.cluster = ClusterConfiguration(servers: ["nats://127.0.0.1:4222"], nodeName: "a")
        // A node's data directory holds its history only: the two go together.
        configuration.persistence.dataDirectory = "/tmp"
        #expect(throws: Never.self) { try configuration.validate() }
        configuration.persistence.history = "7days"
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }

    /// A node's name travels in NATS and HTTP headers: what a header would not carry byte for byte is refused.
    @Test func aNodeNameIsPrintableASCIIWithoutSpaces() {
        var cluster = ClusterConfiguration(servers: ["nats://127.0.0.1:4222"], nodeName: "a")
        let name = ClusterConfiguration.settings.first { $0.flag == "node-name" }!
        for bad in ["", " n1", "n1\r\nX-Injected: 1", "n\u{7F}", "nœud", String(repeating: "n", count: 65)] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try name.set(bad, in: &cluster) }
        }
        #expect(throws: Never.self) { try name.set("host-1.example:8080", in: &cluster) }
        #expect(cluster.nodeName == "host-1.example:8080")
    }
}

/// docs/HTTP.md and Public/openapi.json name settings by their flags: each flag they name exists, and
/// the Limits table gives each setting's own default. (The table of flags itself is made from
/// `--help`; `make test-cli` checks it.)
@Suite("Settings in the docs") struct SettingsDocsTests {
    static let root = repositoryRoot()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The flags the generated table of docs/HTTP.md lists.
    static func documentedFlags() throws -> Set<String> {
        let document = try text("docs/HTTP.md")
        let start = try #require(document.range(of: "<!-- flags: made by Tests/cli/options_table.py"))
        let end = try #require(document.range(of: "<!-- end of flags -->"))
        let table = document[start.upperBound..<end.lowerBound]
        return Set(
            table.split(separator: "\n").compactMap { line in
                line.hasPrefix("| `--") ? String(line.dropFirst(5).prefix { $0 != " " && $0 != "`" }) : nil
            })
    }

    static func flagsNamed(in text: String) -> Set<String> {
        var flags: Set<String> = []
        var rest = Substring(text)
        while let range = rest.range(of: "--") {
            let name = rest[range.upperBound...].prefix { ("a"..."z").contains($0) || $0 == "-" }
            if name.count > 1, !name.hasSuffix("-"),
                range.lowerBound == rest.startIndex
                    || !(rest[rest.index(before: range.lowerBound)].isLetter || rest[rest.index(before: range.lowerBound)] == "-")
            {
                flags.insert(String(name))
            }
            rest = rest[range.upperBound...]
        }
        return flags
    }

    @Test func everyFlagTheDocsNameExists() throws {
        let known = try Self.documentedFlags().union(["help", "version"])
        for library in LiveBindServer.Configuration.settings.map(\.flag) + ClusterConfiguration.settings.map(\.flag) {
            #expect(known.contains(library), "--\(library) is missing from docs/HTTP.md's table of flags")
        }
        for file in ["docs/HTTP.md", "Public/openapi.json", "README.md", "docs/Deploying.md"] {
            // Words after `--` that are not flags: curl's own options and the like.
            // `--no-X` turns off the on/off option `X`.
            let named = Set(
                Self.flagsNamed(in: try Self.text(file)).subtracting(Self.notOurs).map { flag in
                    flag.hasPrefix("no-") && known.contains(String(flag.dropFirst(3))) ? String(flag.dropFirst(3)) : flag
                })
            #expect(named.subtracting(known).isEmpty, "\(file) names flags that do not exist: \(named.subtracting(known).sorted())")
        }
    }

    /// Options of other programs the docs show (curl, openssl, nginx, make, swift, dpkg…).
    static let notOurs: Set<String> = [
        "data-binary", "data-urlencode", "header", "request", "no-buffer", "cacert", "include", "silent", "show-error",
        "fail", "max-time", "url", "write-out", "output", "location", "insecure", "http2", "compressed", "user", "form",
        "product", "static-swift-stdlib", "scratch-path", "filter", "skip-build", "build-tests", "sanitize", "package-path",
        "now", "no-pager", "follow", "unit", "purge", "signal", "raw", "sort-keys", "jwt-kid", "connect-timeout",
        "compact-output", "arg", "argjson", "interactive", "rm", "name", "network", "publish", "volume", "detach",
        "no-cache", "recursive", "quiet", "verbose", "version", "help", "dry-run", "force", "system", "group", "home",
        "no-create-home", "shell", "disabled-password", "gecos", "js", "server", "stream", "retries", "retry",
        "replicas", "storage", "subjects", "defaults", "no-install-recommends", "yes", "print"
    ]

    @Test func theLimitsTableGivesEachSettingsDefault() throws {
        let defaults = LiveBindServer.Configuration()
        var checked = 0
        for line in try Self.text("docs/HTTP.md").split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3, cells[2].hasPrefix("`--"), cells[2].contains("(`") else { continue }
            let flag = String(cells[2].dropFirst(3).prefix { $0 != "`" })
            let setting = try #require(LiveBindServer.Configuration.settings.first { $0.flag == flag }, "--\(flag)")
            let value = setting.value(in: defaults)
            let number = { (text: String) in text.prefix { $0.isNumber } }
            #expect(
                !number(value).isEmpty && number(cells[3]) == number(value),
                "the Limits table gives --\(flag) the default '\(cells[3])'; it is \(value)")
            checked += 1
        }
        #expect(checked >= 10)
    }
}
