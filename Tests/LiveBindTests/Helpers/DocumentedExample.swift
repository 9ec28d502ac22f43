import Foundation

/// A code example a document shows and a test compiles and runs: the lines the test keeps between two
/// markers in its own source, and the lines of the first ```swift block after a marker in the document,
/// both without their common indentation (the document adds `import LiveBind` and a blank line first).
enum DocumentedExample {
    /// The example as `document` shows it after `marker`, and as `source` has it between lines holding
    /// `begin` and `end`; nil where either is missing.
    static func shownAndTested(
        document: String, marker: String, source: String, begin: String,
        end: String
    ) -> (shown: [String], tested: [String])? {
        guard let tested = lines(of: source, from: begin, to: end),
            let afterMarker = document.range(of: marker)?.upperBound,
            let shown = lines(of: String(document[afterMarker...]), from: "```swift", to: "```")
        else { return nil }
        return (dedented(shown), ["import LiveBind", ""] + dedented(tested))
    }

    /// The lines strictly between the first line containing `start` and the next containing `end`.
    static func lines(of text: String, from start: String, to end: String) -> [String]? {
        let all = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = all.firstIndex(where: { $0.contains(start) }),
            let last = all[(first + 1)...].firstIndex(where: { $0.contains(end) })
        else { return nil }
        return Array(all[(first + 1)..<last])
    }

    /// The lines with their common leading indentation removed.
    static func dedented(_ lines: [String]) -> [String] {
        let indent =
            lines.filter { !$0.allSatisfy(\.isWhitespace) }
            .map { $0.prefix(while: { $0 == " " }).count }.min() ?? 0
        return lines.map { $0.allSatisfy(\.isWhitespace) ? "" : String($0.dropFirst(indent)) }
    }
}
