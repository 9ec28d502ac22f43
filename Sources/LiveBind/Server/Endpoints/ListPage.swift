import LiveBindEngine
internal import LiveBindHTTP
/// One page of a list answer (`GET /models`, `GET /bindings`): `{"<member>":[…]}` with the entries
/// after `after` in key order, as many as fit in `maxBytes` (`--max-list-bytes`), and `"next"`, the
/// key of the last one, when more remain (ask again with `?after=`).
///
/// A page holds at least one entry: it is at most `maxBytes`, or one entry larger than that. Entries
/// are encoded one at a time and the first that does not fit ends the page, so a page costs what it
/// answers (and a sort of the keys), however long the list.
struct ListPage {
    /// The answer for `items`, which are sorted by `key` (Swift's `<` on `String`, the order `after`
    /// is compared in).
    static func make<Item>(
        _ member: String, _ items: [Item], key: (Item) -> String, after: String?, maxBytes: Int,
        encode: (Item, inout [UInt8]) -> Void
    ) -> HTTPResponse {
        var bytes = Array("{\"\(member)\":[".utf8)
        var start = items.startIndex
        if let after {
            // The first key past `after`, by binary search: the items are sorted.
            var high = items.endIndex
            while start < high {
                let middle = (start + high) / 2
                if key(items[middle]) <= after { start = middle + 1 } else { high = middle }
            }
        }
        var lastKey: [UInt8]?
        for index in start..<items.endIndex {
            let mark = bytes.count
            if lastKey != nil { bytes.append(UInt8(ascii: ",")) }
            encode(items[index], &bytes)
            var encodedKey: [UInt8] = []
            JSON.string(key(items[index])).encode(into: &encodedKey)
            // The page must still end within `maxBytes`: with `]}` after the last entry, else with
            // `],"next":<this key>}` should the next entry not fit.
            let end = index == items.endIndex - 1 ? 2 : 10 + encodedKey.count
            if let previous = lastKey, bytes.count + end > maxBytes {
                bytes.removeSubrange(mark...)
                bytes += #"],"next":"#.utf8
                bytes += previous
                bytes += "}".utf8
                return .bytes(bytes, contentType: RequestBody.json)
            }
            lastKey = encodedKey
        }
        bytes += "]}".utf8
        return .bytes(bytes, contentType: RequestBody.json)
    }
}
