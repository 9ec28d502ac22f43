import FuzzDriver
import LiveBindClient
@_spi(Fuzzing) import LiveBindClient

/// libFuzzer entry point for what a server, or anything posing as one, sends the Swift client, and
/// the targets an application writes. The first byte chooses where the stream is cut in two chunks;
/// the rest is the stream. It must never crash or hang; the events must not depend on where chunks
/// end; the events applied to a store as a mirror of a few targets must leave it a store that reads;
/// and a target the client accepts must read back as it was written (the input as one target).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClient(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if let (whole, cut) = ClientFuzzing.events(bytes, cut: Int(data[0]) * 16, maxLineBytes: 1024), whole != cut {
        fail("the events depend on where the stream was cut: \(whole) vs \(cut)")
    }
    let store = Store()
    _ = ClientFuzzing.apply(bytes, targets: ["m", "o/items", "o/rows;last=3", "v/items;where=a:eq:1;order=-b"], to: store)
    for (name, _) in store.modelNames() { _ = try? store.value(of: name) }
    let text = String(decoding: bytes, as: UTF8.self)
    if let read = ClientFuzzing.target(text), read != text {
        fail("the target \(text.debugDescription) reads back as \(read.debugDescription)")
    }
    return 0
}

/// Process entry: SwiftPM names an executable's entry `FuzzClient_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzClient_main")
public func fuzzClientMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzClient)
}
