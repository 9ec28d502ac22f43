import FuzzDriver
@_spi(Fuzzing) import LiveBind

/// libFuzzer entry point: the history's query grammar (`from=`, `to=`, `at=`, `since=`, `step=`,
/// `--history`). Any text either names nothing or names a point, a duration or a retention without a
/// crash; a duration written back reads as the same duration; a time the answers write reads back as
/// the same millisecond; a time a query names, written as answers write it, names the same time.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHistoryQuery(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    _ = GrammarFuzzing.historyRetention(text)
    if let (milliseconds, written) = GrammarFuzzing.historyDuration(text) {
        if milliseconds < 0 { fail("a negative duration from \(text)") }
        if GrammarFuzzing.historyDuration(written)?.milliseconds != milliseconds { fail("\(text) → \(written) reads back otherwise") }
    }
    // Years 1600 to 9999: Foundation's parser reads dates before the Gregorian reform (1582) in the
    // Julian calendar, where the answers write the proleptic Gregorian one (found by this target).
    let years: ClosedRange<Int64> = -11_676_096_000_000...253_402_300_799_999
    // A time a query names is within RFC 3339's years: arithmetic on it cannot overflow.
    if let time = GrammarFuzzing.historyPoint(text)?.time, !(-62_135_596_800_000...253_402_300_799_999).contains(time) {
        fail("\(text) names \(time), outside the years 0001 to 9999")
    }
    if let point = GrammarFuzzing.historyPoint(text), let time = point.time, years.contains(time) {
        let (written, read) = GrammarFuzzing.historyTime(time)
        if read != time { fail("\(text) → \(time) → \(written) reads back as \(String(describing: read))") }
    }
    if size >= 8 {
        // Any millisecond from year 1600 to 9999, written and read back.
        let raw = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let span = UInt64(years.upperBound - years.lowerBound + 1)
        let time: Int64 = years.lowerBound + Int64(raw % span)
        let (written, read) = GrammarFuzzing.historyTime(time)
        if read != time { fail("\(time) → \(written) reads back as \(String(describing: read))") }
    }
    return 0
}

/// Process entry: SwiftPM names an executable's entry `FuzzHistoryQuery_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzHistoryQuery_main")
public func fuzzHistoryQueryMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzHistoryQuery)
}
