import FuzzDriver
import LiveBind

/// libFuzzer entry point: any bytes either fail to parse with a `JSONError`, or parse to a value whose
/// encoding parses back to the same value (the encoder and the parser agree).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let value = try? JSON(parsing: bytes) else { return 0 }
    let encoded = value.encoded()
    guard let again = try? JSON(parsing: encoded) else {
        fatalError("encoder produced unparsable output: \(String(decoding: encoded, as: UTF8.self))")
    }
    precondition(again == value, "round trip changed the value: \(value) became \(again)")
    return 0
}

/// Process entry: SwiftPM names an executable's entry `FuzzJSON_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzJSON_main")
public func fuzzJSONMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzJSON)
}
