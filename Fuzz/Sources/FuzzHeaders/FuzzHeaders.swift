import FuzzDriver
import Glibc
@_spi(Fuzzing) import LiveBind

/// libFuzzer entry point: each of the input's first four lines is sent as a `Last-Event-ID` (header and
/// `?lastEventId=`) to a hub that retains commits 105–112 of a run that started after 100, and as an
/// `If-Match`. It must never crash or hang, and:
/// - a stream always opens; it resumes, with no `resync`, exactly when the value (spaces and tabs
///   around it aside) is a decimal number of a retained commit or of the newest, and then reads every
///   later commit in order; a value from before the run or after the newest gets `resync` `restart`,
///   any other value `resync` `gap`; the header and the query parameter are read alike;
/// - `If-Match` is absent or `*` (no condition), a revision written as its ETag (`"3"`; the number as
///   the server writes it, no sign, no leading zero), a weak tag of one (`W/"3"`), refused with
///   `weakPrecondition` as it never matches, or refused with `invalidPrecondition`; the ETag of any
///   revision reads back as that revision.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeaders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).prefix(4) {
        checkLastEventID(String(line))
        checkIfMatch(String(line))
    }
    return 0
}

func checkLastEventID(_ value: String) {
    let streams = HeadersFixture.streams
    let (dropped, newest, runStart) = streams.retained
    let trimmed = trimmingSpaces(value)
    let expected: String?  // the resync reason, nil for a resume
    // An id is decimal digits, as the server writes it: `+110` names no event.
    if trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let sequence = UInt64(trimmed) {
        expected = sequence > newest ? "restart" : sequence < dropped ? (sequence < (runStart ?? 0) ? "restart" : "gap") : nil
    } else {
        expected = "gap"
    }
    var outcomes: [String] = []
    for (query, headers) in [([], [("Last-Event-ID", value)]), ([("lastEventId", value)], [])] {
        let opened: GrammarFuzzing.Streams.Opened
        do { opened = try streams.open(query: query, headers: headers) } catch {
            fail("a stream with Last-Event-ID \(value) was refused: \(error)")
        }
        streams.close(opened)
        let reason = resyncReason(in: opened.preface)
        if reason != expected { fail("Last-Event-ID \(value): resync \(reason ?? "none"), expected \(expected ?? "none")") }
        if reason == nil {
            // Swift reads a leading "+" too; anything else that resumes is digits.
            let digits = trimmed.hasPrefix("+") ? trimmed.dropFirst() : Substring(trimmed)
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), UInt64(digits) == opened.lastSequence else {
                fail("Last-Event-ID \(value) resumed after \(opened.lastSequence)")
            }
            if opened.pending != Array(opened.lastSequence + 1..<newest + 1) {
                fail("Last-Event-ID \(value) resumed with commits \(opened.pending), retained up to \(newest)")
            }
        }
        outcomes.append("\(reason ?? "resume") \(opened.lastSequence) \(opened.pending)")
    }
    if outcomes[0] != outcomes[1] { fail("Last-Event-ID \(value): header \(outcomes[0]), query \(outcomes[1])") }
}

func checkIfMatch(_ value: String) {
    let revision: UInt64?
    do { revision = try GrammarFuzzing.ifMatch([("If-Match", value)]) } catch {
        switch error {
        case .invalidPrecondition: return
        case .weakPrecondition:
            // Strong comparison: a weak tag is refused (412), and only a well-formed one.
            let tag = trimmingSpaces(value).dropFirst(2)
            guard trimmingSpaces(value).hasPrefix("W/"), let number = UInt64(tag.dropFirst().dropLast()),
                tag == "\"\(number)\""
            else { fail("If-Match \(value) refused as a weak tag") }
            return
        default: fail("If-Match \(value) refused with \(error)")
        }
    }
    let trimmed = trimmingSpaces(value)
    guard let revision else {
        if trimmed != "*" { fail("If-Match \(value) read as no condition") }
        return
    }
    if trimmed != "\"\(revision)\"" { fail("If-Match \(value) read as revision \(revision), whose ETag is \"\(revision)\"") }
    for written in ["\"\(revision)\"", " \t\"\(revision)\" "] {
        guard (try? GrammarFuzzing.ifMatch([("if-match", written)])) == revision else {
            fail("If-Match \(written) does not read as revision \(revision)")
        }
    }
    // Only the first field counts; a second one changes nothing.
    guard (try? GrammarFuzzing.ifMatch([("If-Match", value), ("If-Match", "garbage")])) == revision else {
        fail("a second If-Match changed how \(value) reads")
    }
}

/// `text` without the spaces and tabs around it (HTTP's optional whitespace).
func trimmingSpaces(_ text: String) -> String {
    var slice = Substring(text)
    while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
    while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
    return String(slice)
}

/// The `reason` of the `resync` event among these events, if there is one.
func resyncReason(in text: String) -> String? {
    guard let start = text.range(of: "event: resync\ndata: ") else { return nil }
    let line = text[start.upperBound...].prefix { $0 != "\n" }
    guard let data = try? JSON(parsing: String(line)), case .string(let reason)? = data["reason"] else {
        fail("resync without a reason: \(line)")
    }
    return reason
}

enum HeadersFixture {
    /// A run that started after commit 100 and made commits 101–112, of which the hub retains the
    /// last eight: a resume after 104…112 continues; after 100…103 is a gap; before 100 or after 112 another run.
    static let streams: GrammarFuzzing.Streams = {
        let streams = GrammarFuzzing.Streams(retainedEvents: 8, maxWindow: 100, maxSubscriptions: 8, startingSequence: 100)
        do {
            try streams.store.put("sensor", ["value": 0])
            for value in 1...11 { try streams.store.set(.int(value), at: Path(["value"]), in: "sensor") }
        } catch {
            fail("the fixture's writes were refused: \(error)")
        }
        let retained = streams.retained
        guard retained.droppedThrough == 104, retained.newest == 112, retained.runStart == 100 else {
            fail("the fixture retains \(retained), not 105–112 of a run from 100")
        }
        return streams
    }()
}

/// Process entry: SwiftPM names an executable's entry `FuzzHeaders_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzHeaders_main")
public func fuzzHeadersMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzHeaders)
}
