import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Paths") struct PathTests {
    @Test func parsesDottedPaths() throws {
        #expect(try Path(dotted: "sensor.readings.3.value").components == ["sensor", "readings", "3", "value"])
        #expect(try Path(dotted: "") == .root)
    }

    @Test(arguments: [("a..b", 1), (".a", 0), ("a.", 1)])
    func rejectsEmptyDottedComponents(_ text: String, _ index: Int) {
        #expect(throws: PathError.emptyComponent(dotted: text, index: index)) { try Path(dotted: text) }
    }

    @Test func parsesPointersWithEscapes() throws {
        #expect(try Path(pointer: "/readings/3/value").components == ["readings", "3", "value"])
        #expect(try Path(pointer: "/a~1b/m~0n/~01").components == ["a/b", "m~n", "~1"])
        #expect(try Path(pointer: "") == .root)
        #expect(try Path(pointer: "/").components == [""])
        #expect(try Path(pointer: "//x").components == ["", "x"])
    }

    @Test func rejectsBadPointers() {
        #expect(throws: PathError.missingLeadingSlash(pointer: "a/b")) { try Path(pointer: "a/b") }
        #expect(throws: PathError.invalidEscape(pointer: "/a~2", offset: 2)) { try Path(pointer: "/a~2") }
        #expect(throws: PathError.invalidEscape(pointer: "/a~", offset: 2)) { try Path(pointer: "/a~") }
        #expect(PathError.invalidEscape(pointer: "/a~", offset: 2).description.contains("~0"))
    }

    @Test func printsPointerAndDottedForms() throws {
        let path = try Path(pointer: "/a~1b/m~0n/0")
        #expect(path.pointer == "/a~1b/m~0n/0")
        #expect(path.dotted == "a/b.m~n.0")
        #expect(try Path(dotted: "x.y").pointer == "/x/y")
        #expect(Path.root.pointer == "")
    }

    @Test func navigatesParentsAndPrefixes() throws {
        let path = try Path(dotted: "a.b.c")
        #expect(path.parent == (try Path(dotted: "a.b")))
        #expect(path.last == "c")
        #expect(Path.root.parent == nil)
        #expect(Path.root.last == nil)
        #expect(try Path(dotted: "a").appending("b").appending("c") == path)
        #expect(Path.root.isPrefix(of: path))
        #expect(try Path(dotted: "a.b").isPrefix(of: path))
        #expect(path.isPrefix(of: path))
        #expect(!(try Path(dotted: "a.x").isPrefix(of: path)))
        #expect(!path.isPrefix(of: try Path(dotted: "a.b")))
    }

    @Test func arrayIndicesMustBeCanonical() {
        #expect(Path.arrayIndex("0") == 0)
        #expect(Path.arrayIndex("12") == 12)
        for bad in ["01", "-1", "+1", "", "1a", "-", "99999999999999999999a"] {
            #expect(Path.arrayIndex(bad) == nil, "\(bad)")
        }
        // Too large for an Int: past the end of any array, so out of range rather than a member name.
        #expect(Path.arrayIndex("9223372036854775807") == .max)
        #expect(Path.arrayIndex("99999999999999999999") == .max)
    }

    /// Found by FuzzPath: a separator followed by a combining mark (U+06E0) forms one grapheme cluster,
    /// and parsing by `Character` lost the separator.
    @Test func separatorsFollowedByCombiningMarksStillSeparate() throws {
        let dotted = try Path(dotted: "a.\u{6E0}b")
        #expect(dotted.components == ["a", "\u{6E0}b"])
        let pointer = try Path(pointer: "/\u{6E0}\u{FFFD}")
        #expect(pointer.components == ["\u{6E0}\u{FFFD}"])
        #expect(try Path(pointer: pointer.pointer) == pointer)
        let escaped = try Path(pointer: "/a~1\u{301}")
        #expect(escaped.components == ["a/\u{301}"])
        #expect(try Path(pointer: escaped.pointer) == escaped)
    }
}
