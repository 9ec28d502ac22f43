import FuzzDriver
import LiveBind

/// libFuzzer entry point: the input is a JSON Patch (or, when it is an object, a merge patch) applied to a
/// fixed document. A patch either applies, or fails and leaves the model, its revision and the store's
/// sequence exactly as they were.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPatch(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let patch = try? JSON(parsing: UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    let store = Store()
    let document: JSON = [
        "title": "probe", "count": 3, "on": true, "tags": ["a", "b", "c"],
        "rows": [["id": 1, "value": 1.5], ["id": 2, "value": nil]], "nested": ["deep": ["x": [1, 2, 3]]]
    ]
    do { try store.put("doc", document) } catch { fatalError("seed document refused: \(error)") }
    let before = try? store.snapshot("doc")
    let sequence = store.lastSequence
    do {
        if case .object = patch {
            try store.mergePatch(patch, in: "doc")
        } else {
            try store.jsonPatch(patch, in: "doc")
        }
    } catch {
        let after = try? store.snapshot("doc")
        precondition(after?.value == before?.value, "a failed patch changed the document")
        precondition(after?.revision == before?.revision, "a failed patch bumped the revision")
        precondition(store.lastSequence == sequence, "a failed patch used a sequence number")
    }
    return 0
}

/// Process entry: SwiftPM names an executable's entry `FuzzPatch_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzPatch_main")
public func fuzzPatchMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzPatch)
}
