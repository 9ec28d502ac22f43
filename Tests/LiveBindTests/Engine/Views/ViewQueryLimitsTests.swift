import Testing
@testable import LiveBindEngine

/// A view query's size is bounded when it is parsed (`ViewQuery.Limits`), so evaluating it over n
/// elements costs at most n × `maxTerms` comparisons; `match` case-folds as it searches.
@Suite("View query limits") struct ViewQueryLimitsTests {
    static let limits = ViewQuery.Limits(maxTerms: 6, maxInValues: 4, maxBytes: 64)

    static func values(_ count: Int) -> String { (0..<count).map(String.init).joined(separator: ",") }

    @Test func eachLimitIsReachedAndOneStepPastItIsRefusedNamingIt() throws {
        _ = try ViewQuery(where: "n:in:(\(Self.values(4)))", limits: Self.limits)
        _ = try ViewQuery(where: "or(n:in:(\(Self.values(4))),n:eq:1,n:eq:2)", limits: Self.limits)
        _ = try ViewQuery(where: "s:eq:" + String(repeating: "a", count: 59), limits: Self.limits)
        let past: [(String, ViewQuery.Bound.Kind, Int)] = [
            ("n:in:(\(Self.values(5)))", .inValues, 4),
            ("or(n:in:(\(Self.values(4))),n:eq:1,n:eq:2,n:eq:3)", .terms, 6),
            ("or(n:in:(\(Self.values(4))),n:in:(\(Self.values(3))))", .terms, 6),
            ("s:eq:" + String(repeating: "a", count: 60), .bytes, 64)
        ]
        for (filter, kind, limit) in past {
            #expect(throws: ViewQueryError.self, "\(filter)") { _ = try ViewQuery(where: filter, limits: Self.limits) }
            do throws(ViewQueryError) {
                _ = try ViewQuery(where: filter, limits: Self.limits)
            } catch {
                #expect(error.exceeded == ViewQuery.Bound(kind: kind, limit: limit), "\(filter)")
            }
        }
        // The order counts toward the bytes.
        #expect(throws: ViewQueryError.self) {
            _ = try ViewQuery(where: "n:eq:1", order: String(repeating: "a", count: 60), limits: Self.limits)
        }
    }

    @Test func aMalformedQueryExceedsNoLimit() {
        do throws(ViewQueryError) {
            _ = try ViewQuery(where: "n:like:1", limits: Self.limits)
            Issue.record("parsed")
        } catch {
            #expect(error.exceeded == nil)
        }
    }

    @Test func matchFoldsCaseAsStringLowercasedDoes() throws {
        let texts = ["Straße", "İstanbul", "ΣΊΣΥΦΟΣ", "ǅemal", "ABC def", "ﬁle", "", "Ⅻ Ⓐ"]
        let parts = ["STRASSE", "straße", "i̇st", "σίσυφος", "ǆe", "c D", "FI", "ﬁ", "ⅻ ⓐ", ""]
        for text in texts {
            for part in parts {
                // What `match` did before: both strings lowercased whole, then searched scalar by scalar.
                let (whole, wanted) = (Array(text.lowercased().unicodeScalars), Array(part.lowercased().unicodeScalars))
                let expected =
                    wanted.isEmpty
                    || (0...max(0, whole.count - wanted.count)).contains { start in
                        start + wanted.count <= whole.count && Array(whole[start..<start + wanted.count]) == wanted
                    }
                let query = try ViewQuery(where: "s:match:\"\(part)\"")
                #expect(query.keeps(["s": .string(text)]) == expected, "\(text) match \(part)")
            }
        }
    }
}
