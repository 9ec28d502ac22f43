import Testing
@_spi(Fuzzing) @testable import LiveBind

@Suite("Version") struct VersionTests {
    @Test func versionIsSemantic() {
        #expect(LiveBindVersion.string.split(separator: ".").count == 3)
    }
}
