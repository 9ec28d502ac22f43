import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Version") struct VersionTests {
    @Test func versionIsSemantic() {
        #expect(LiveBindVersion.string.split(separator: ".").count == 3)
    }
}
