import OrderedCollections
import DequeModule
import FuzzDriver
import Glibc
import LiveBind

/// libFuzzer entry point: the input is read both as a tokens file (`--tokens`, `AccessPolicy.Token.list`)
/// and as a `--config` definition (`BindingSet(definition:registry:)`, what the executable's ConfigFile
/// calls after reading the file; the executable's own step, keeping models a data directory restored,
/// is not in the library and not fuzzed). It must never crash or hang, and:
/// - a tokens file gives one usable token per entry (a visible-ASCII secret, a scope, no empty model
///   prefix, no secret twice), written back it reads the same, or it is refused with
///   `invalidTokensFile`; what it says depends on no secret (every secret changed alike, it says the same);
/// - a definition is refused with `invalidDefinition` listing at least one issue, and then nothing of
///   it is applied (no model, no binding), or it is applied whole: every declared model is in the store
///   and there is one binding per entry.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkTokensFile(bytes)
    checkDefinition(bytes)
    return 0
}

func checkTokensFile(_ bytes: [UInt8]) {
    let outcome = tokens(bytes)
    if case .success(let list) = outcome {
        guard case .array(let entries)? = try? JSON(parsing: bytes), entries.count == list.count else {
            fail("a tokens file gave \(list.count) tokens for another number of entries")
        }
        for (index, token) in list.enumerated() {
            if token.secret.isEmpty || !token.secret.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) || token.scopes.isEmpty
                || token.models.map({ $0.isEmpty || $0.contains("") }) == true
                || list[..<index].contains(where: { $0.secret == token.secret })
            {
                fail("tokens file entry \(index + 1) gave an unusable token (\(token.name ?? "no name"))")
            }
        }
        let written = JSON.array(Deque(list.map(entry)))
        guard case .success(let again) = tokens(written.encoded()), again.map(entry) == list.map(entry) else {
            fail("the tokens written back do not read the same")
        }
    }
    // Change every secret alike (ROT47 keeps visible ASCII visible, distinct secrets distinct): what the
    // file says must not change, so no message carries a secret.
    guard let document = try? JSON(parsing: bytes), case .array(let entries) = document else { return }
    let rotated = JSON.array(
        Deque(
            entries.map { entry in
                guard case .object(var members) = entry, case .string(let secret)? = members["token"] else { return entry }
                members["token"] = .string(rot47(secret))
                return .object(members)
            }))
    switch (outcome, tokens(rotated.encoded())) {
    case (.success(let list), .success(let other)):
        if list.map({ rot47($0.secret) }) != other.map(\.secret) { fail("changing the secrets changed the tokens") }
    case (.failure(let error), .failure(let other)):
        if error.description != other.description { fail("a tokens file's message depends on a secret: \(error) / \(other)") }
    default:
        fail("changing the secrets changed whether the tokens file is accepted")
    }
}

/// The file's tokens, or its error (which must be `invalidTokensFile`).
func tokens(_ bytes: [UInt8]) -> Result<[AccessPolicy.Token], ServerError> {
    do { return .success(try AccessPolicy.Token.list(json: bytes)) } catch {
        guard case .invalidTokensFile = error else { fail("a tokens file was refused with \(error)") }
        return .failure(error)
    }
}

/// A token as a tokens-file entry.
func entry(_ token: AccessPolicy.Token) -> JSON {
    var members: OrderedDictionary<String, JSON> = [
        "token": .string(token.secret), "scopes": .array(Deque(token.scopes.map(\.rawValue).sorted().map(JSON.string)))
    ]
    if let models = token.models { members["models"] = .array(Deque(models.map(JSON.string))) }
    if let name = token.name { members["name"] = .string(name) }
    return .object(members)
}

/// Rotates each visible ASCII character by 47 places among the 94; leaves the others.
func rot47(_ text: String) -> String {
    String(decoding: text.utf8.map { (0x21...0x7E).contains($0) ? 0x21 + ($0 - 0x21 + 47) % 94 : $0 }, as: UTF8.self)
}

func checkDefinition(_ bytes: [UInt8]) {
    let store = Store()
    let registry = BindingRegistry(store: store)
    let set: BindingSet
    do { set = try BindingSet(definition: bytes, registry: registry) } catch {
        guard case .invalidDefinition(let issues) = error, !issues.isEmpty else { fail("a definition was refused with \(error)") }
        if !store.modelNames().isEmpty || !registry.all.isEmpty {
            fail("a refused definition left \(store.modelNames().count) models and \(registry.all.count) bindings")
        }
        return
    }
    guard case .object(let members)? = try? JSON(parsing: bytes) else { fail("a definition that is no object was applied") }
    let declared = members["models"]?.objectValue?.keys.map { $0 } ?? []
    let entries = members["bindings"]?.arrayValue?.count ?? 0
    let names = Set(store.modelNames().map(\.name))
    if !declared.allSatisfy(names.contains) { fail("an applied definition is missing models: \(declared) vs \(names)") }
    if set.bindings.count != entries || registry.all.count != entries {
        fail("\(entries) entries made \(set.bindings.count) bindings, \(registry.all.count) in the registry")
    }
    set.unbind()
    if !registry.all.isEmpty { fail("unbinding the set left \(registry.all.count) bindings") }
}

/// Process entry: SwiftPM names an executable's entry `FuzzConfig_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzConfig_main")
public func fuzzConfigMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzConfig)
}
