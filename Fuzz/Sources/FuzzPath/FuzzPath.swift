import FuzzDriver
import LiveBind

/// libFuzzer entry point: any string either fails to parse as a pointer or a dotted key path with a
/// `PathError`, or parses to a path whose printed pointer parses back to the same path.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPath(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let path = try? Path(pointer: text) {
        precondition((try? Path(pointer: path.pointer)) == path, "pointer round trip failed for \(text)")
    }
    if let path = try? Path(dotted: text) {
        precondition((try? Path(pointer: path.pointer)) == path, "dotted → pointer round trip failed for \(text)")
    }
    return 0
}

/// Process entry: SwiftPM names an executable's entry `FuzzPath_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzPath_main")
public func fuzzPathMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzPath)
}
