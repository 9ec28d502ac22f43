import FuzzDriver
import Glibc
@_spi(Fuzzing) import LiveBind

/// libFuzzer entry point: the input is a bearer token (static, JWT or anything), presented in
/// `Authorization` (as `Bearer <input>`, and raw as the whole field from the first newline on) and as
/// `?access_token=`, to the same access check a server runs. It must never crash or hang, never accept
/// a token it was not given (only the configured static token, or a JWT signed with the fuzzer's
/// secret for its audience, may pass), and answer the same for the same token wherever it is sent.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBearer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let checker = BearerFixture.checker
    let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    let (token, rawField) = (lines[0], lines.count == 2 ? lines[1] : nil)
    let header = checker.scopes(headers: [("Authorization", "Bearer " + token)], query: [])
    let query = checker.scopes(headers: [], query: [("access_token", token)])
    if let rawField { _ = checker.scopes(headers: [("Authorization", rawField)], query: [("access_token", rawField)]) }
    // Spaces and tabs around a header value are not part of it (HTTP's OWS); a query value is taken as sent.
    var trimmed = Substring(token)
    while let first = trimmed.first, first == " " || first == "\t" { trimmed = trimmed.dropFirst() }
    while let last = trimmed.last, last == " " || last == "\t" { trimmed = trimmed.dropLast() }
    if header != nil || query != nil {
        // Base64url's last character may carry bits a decoder ignores: a seed token with another last
        // character is still the same signature.
        let known =
            trimmed == BearerFixture.token
            || BearerFixture.signed.contains { $0.dropLast() == trimmed.dropLast() }
        if !known { fail("accepted a token it was not given: \(token.utf8.count) bytes") }
    }
    if query != nil && trimmed != Substring(token) { fail("the query took a token with spaces around it") }
    if trimmed == Substring(token), header != query {
        fail("header and query disagree: \(String(describing: header)) vs \(String(describing: query))")
    }
    return 0
}

enum BearerFixture {
    static let token = "fuzz-static-token-0123"
    static let secret = "fuzz-hs256-secret-0123456789abcdef-0123"
    /// The JWTs signed with `secret` for audience `fuzz` (valid until 2100): the seeds `valid-read-write`
    /// and `valid-read`. No other JWT may pass.
    static let signed = [
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjQxMDI0NDQ4MDAsImF1ZCI6ImZ1enoiLCJzY29wZSI6InJlYWQgd3JpdGUiLCJtb2RlbHMiOlsibGFiLSJdfQ.QjiDBgwGoUZK6rbF51gZ16262TqwLVS5vbk4UHBnCDA",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjQxMDI0NDQ4MDAsImF1ZCI6ImZ1enoiLCJzY29wZSI6InJlYWQifQ.YncJgjpZirH7TkyKC7cfGDvuwRrPjBVa5YCOYNhyHAI"
    ]
    static let checker: AccessFuzzing.Checker = {
        do { return try AccessFuzzing.Checker(token: token, secret: secret, audience: "fuzz") } catch {
            fail("checker did not start: \(error)")
        }
    }()
}

/// Process entry: SwiftPM names an executable's entry `FuzzBearer_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzBearer_main")
public func fuzzBearerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzBearer)
}
