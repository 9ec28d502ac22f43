import OrderedCollections
import DequeModule
import FuzzDriver
import Glibc
@_spi(Fuzzing) import LiveBind

/// libFuzzer entry point for views (`sub=…;where=…;order=…`): the input's first line is a `where`,
/// the second an `order` (an empty line: none), the third `offset,limit`; the rest drives changes of an
/// array, three bytes each. It must never crash or hang, and:
/// - `where` and `order` parse to a view or are refused with a `ViewQueryError` naming the part;
/// - the `sub` value with them parses the same view or is refused with a `RequestError`;
/// - after every change, the rows the view's changes built (applied in order to its first rows) are
///   the rows a full filter and stable sort of the array gives, and `matchCount` is how many match.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzView(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 3, omittingEmptySubsequences: false)
    guard lines.count >= 3 else { return 0 }
    let filter = String(decoding: lines[0], as: UTF8.self), order = String(decoding: lines[1], as: UTF8.self)
    let window = String(decoding: lines[2], as: UTF8.self).split(separator: ",").map { Int($0) }
    // Any numbers, Int.max too: the view refuses what it cannot hold (an offset + limit that overflowed
    // crashed the server once).
    let offset = window.first.flatMap { $0 } ?? 0
    let limit = window.count > 1 ? window[1] : nil
    let query: ViewQuery
    do {
        query = try ViewQuery(where: filter.isEmpty ? nil : filter, order: order.isEmpty ? nil : order, offset: offset, limit: limit)
    } catch {
        guard ["where", "order", "offset", "limit"].contains(error.part) else { fail("refused with \(error), naming no part") }
        return 0
    }
    var sub = "m/items;where=\(filter.isEmpty ? "x:ne:1" : filter)"
    if !order.isEmpty { sub += ";order=\(order)" }
    if let limit { sub += ";limit=\(limit)" }
    // A view is refused as a `sub` only for text the `sub` grammar gives another meaning (`;`), or a
    // limit past the window's bound.
    if limit.map({ (1...50).contains($0) }) ?? true {
        do { _ = try GrammarFuzzing.location(sub, maxWindow: 50) } catch {
            if !(filter + order).contains(";") { fail("\(sub) refused with \(error) while its view parses") }
        }
    }
    let changes = lines.count > 3 ? Array(lines[3]) : []
    var elements: [JSON] = []
    let path = Path(["items"])
    let view = ArrangedArray(elements, query: query)
    var shown = JSON.array([])
    for step in stride(from: 0, to: min(changes.count, 600) - 2, by: 3) {
        let (kind, at, seed) = (changes[step] % 6, Int(changes[step + 1]), changes[step + 2])
        let change: Change
        switch kind {
        case 0, 1:
            let index = at % (elements.count + 1)
            elements.insert(element(seed), at: index)
            change = Change(kind: .insert, path: path, value: elements[index], index: index)
        case 2 where !elements.isEmpty:
            let index = at % elements.count
            elements.remove(at: index)
            change = Change(kind: .remove, path: path, index: index)
        case 3 where !elements.isEmpty:
            let index = at % elements.count
            elements[index] = element(seed)
            change = Change(kind: .replace, path: path, value: elements[index], index: index)
        case 4 where elements.count > 1:
            let from = at % elements.count, to = Int(seed) % elements.count
            elements.insert(elements.remove(at: from), at: to)
            change = Change(kind: .move, path: path, from: from, to: to)
        default:
            guard !elements.isEmpty, case .object(var members) = elements[at % elements.count] else { continue }
            members["t"] = .int(Int(seed % 7))
            elements[at % elements.count] = .object(members)
            change = Change(kind: .set, path: Path(["items", String(at % elements.count), "t"]), value: .int(Int(seed % 7)))
        }
        for sent in view.apply(change, at: path) {
            var relative = sent
            relative.path = Path(Array(sent.path.components.dropFirst()))
            do { try GrammarFuzzing.replay(relative, onto: &shown) } catch {
                fail("the view sent \(sent), which does not apply to \(shown): \(error)")
            }
        }
        let expected = GrammarFuzzing.arrangedByFullSort(elements, query)
        guard shown == .array(Deque(expected.rows)), view.matchCount == expected.matching else {
            fail("after \(change) the view shows \(shown), not \(expected.rows) (\(view.matchCount) matching, not \(expected.matching))")
        }
    }
    return 0
}

/// A small element: an object with a few fields, or now and then a bare value.
private func element(_ seed: UInt8) -> JSON {
    if seed % 11 == 0 { return .int(Int(seed % 5)) }
    if seed % 13 == 0 { return .string(["a", "B", "ab"][Int(seed) % 3]) }
    var members: OrderedDictionary<String, JSON> = [
        "id": .int(Int(seed)), "s": .string(["a", "b", "c"][Int(seed) % 3]), "t": .int(Int(seed % 7))
    ]
    if seed % 5 == 0 { members["x"] = .double(Double(seed % 4) / 2) }
    if seed % 7 == 0 { members["tags"] = .array([.string("a"), .int(Int(seed % 3))]) }
    return .object(members)
}

/// Process entry: SwiftPM names an executable's entry `FuzzView_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzView_main")
public func fuzzViewMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzView)
}
