import Testing
@testable import LiveBind

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
                + (range.upperBound < Int.max ? [(range.upperBound + 1, false)] : []) {
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
        #expect(throws: ServerError.invalidConfiguration(ConfigurationError(flag: "retained-events", reason: "must be at least 1, not 0"))) {
            try server.start()
        }
    }

    @Test func secondsAndNumbersAreBoundedBeforeTheyAreConverted() {
        var configuration = LiveBindServer.Configuration()
        for (flag, text) in [("heartbeat", "1e300"), ("request-timeout", "-1"), ("write-rate", "1e300"), ("heartbeat", "nan"),
                             ("session-lifetime", "0"), ("port", "99999999999999999999")] {
            let setting = LiveBindServer.Configuration.settings.first { $0.flag == flag }!
            #expect(throws: ConfigurationError.self, "--\(flag) \(text)") { try setting.set(text, in: &configuration) }
        }
        #expect(throws: Never.self) { try configuration.validate() }
    }

    @Test func clusterSettingsGoTogether() {
        var cluster = ClusterConfiguration(servers: ["nats://127.0.0.1:4222"], nodeName: "a")
        cluster.maxCommits = Int.max
        cluster.snapshotInterval = Int.max / 2
        #expect(throws: ConfigurationError(flag: "cluster-max-commits", reason: "needs snapshots: at least 3 times --cluster-snapshot-interval")) {
            try cluster.validate()
        }
        var configuration = LiveBindServer.Configuration()
        configuration.cluster = ClusterConfiguration(servers: ["nats://127.0.0.1:4222"], nodeName: "a")
        configuration.persistence.dataDirectory = "/tmp"
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }
}
