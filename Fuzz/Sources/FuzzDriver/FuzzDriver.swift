import Glibc

/// The signature libFuzzer calls for each input.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>, Int) -> CInt

// libFuzzer's driver entry point (compiler-rt, linked by `-sanitize=fuzzer`). SwiftPM links an executable
// target's entry as `<Target>_main` and aliases `main` to it, so libFuzzer's own `main` is never pulled in:
// each target's entry calls this instead.
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ target: FuzzTarget
) -> CInt

/// Runs libFuzzer with the process's arguments on `target`.
public func runFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ target: FuzzTarget
) -> CInt {
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector, target)
}

/// Reports a broken promise on stderr (release builds drop `precondition` messages), named for the
/// target that found it (the module, first in `fileID`), and aborts, which libFuzzer records with the
/// input. Messages are cut at 2,000 characters.
public func fail(_ message: String, fileID: StaticString = #fileID) -> Never {
    let target = "\(fileID)".split(separator: "/").first ?? "fuzz"
    let line = Array("\(target): \(message.prefix(2_000))\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    abort()
}
