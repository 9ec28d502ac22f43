import FuzzDriver
import Glibc
@_spi(Fuzzing) import LiveBind

/// libFuzzer entry point: the input is one or more `Cookie` field values (one per line), as browsers
/// and attackers send them. What the session-cookie parser finds must be a well-formed session id
/// (64 lowercase hex digits) that appears in the input after `livebind_session=`, or nothing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCookie(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let id = AccessFuzzing.sessionID(inCookies: fields) else { return 0 }
    if id.utf8.count != 64 || !id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
        fail("found a malformed id of \(id.utf8.count) bytes")
    }
    if !text.contains(id) || !text.contains("livebind_session") { fail("found an id that is not in the input") }
    return 0
}

/// Process entry: SwiftPM names an executable's entry `FuzzCookie_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzCookie_main")
public func fuzzCookieMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzCookie)
}
