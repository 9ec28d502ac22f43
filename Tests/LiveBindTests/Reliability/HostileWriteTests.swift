import Foundation
import Testing

/// Scripts of writes whose cost grows faster than their size, or that grow a model step by step until a
/// limit refuses them. Each states its memory bound and the answers it expects.
extension ReliabilityTests.HostileSequenceTests {
    @Suite("Hostile writes") struct HostileWriteTests {
        static let jsonPatch = "application/json-patch+json"
        static let mergePatch = "application/merge-patch+json"
        static let form = "application/x-www-form-urlencoded"

        /// Issue 13's first attack: a PATCH of 40 `copy` from `""` doubles the model 40 times (it hung
        /// the server at 111 MB and counting). Default flags. Expected: 413 naming `--max-model-size`
        /// within 5 s, five times in a row; a patch of 10 such copies (1 KB × 2¹⁰) is accepted and one
        /// of 10 more is refused. Bound: 100 MiB.
        @Test(.timeLimit(.minutes(2))) func copyingTheWholeModelFortyTimesIsRefusedEveryTime() throws {
            let bound = MemoryBound(mebibytes: 100)
            let server = try HostileServer(bound: bound)
            let seed = #"{"seed":"\#(String(repeating: "s", count: 1_000))"}"#
            #expect(try server.send("PUT", "/models/m", seed).status == 201)
            let watch = try EventWatch(server)
            let before = try server.state(of: "m")
            let forty = (0..<40).map { #"{"op":"copy","from":"","path":"/c\#($0)"}"# }.joined(separator: ",")
            for _ in 1...5 {
                let started = ContinuousClock.now
                let response = try server.send("PATCH", "/models/m", "[\(forty)]", type: Self.jsonPatch)
                #expect(ContinuousClock.now - started < server.scaled(.seconds(5)))
                expectLimitProblem(response, 413, flag: "--max-model-size")
                #expect(try server.state(of: "m") == before)
                #expect(server.isUp)
                try server.requireMemory()
            }
            #expect(try watch.events().isEmpty)

            let ten = (0..<10).map { #"{"op":"copy","from":"","path":"/d\#($0)"}"# }.joined(separator: ",")
            #expect(try server.send("PATCH", "/models/m", "[\(ten)]", type: Self.jsonPatch).status == 200)
            let grown = try server.state(of: "m")
            #expect(grown.body.utf8.count > 1_000 << 10)
            #expect(try watch.events().count == 1)
            let grownNow = try server.state(of: "m")  // the sentinel's write moved the event id on
            let more = (0..<10).map { #"{"op":"copy","from":"","path":"/e\#($0)"}"# }.joined(separator: ",")
            expectLimitProblem(try server.send("PATCH", "/models/m", "[\(more)]", type: Self.jsonPatch), 413, flag: "--max-model-size")
            #expect(try server.state(of: "m") == grownNow)
            #expect(try watch.events().isEmpty)
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print(
                "Hostile copies: 5 × 40 copies of the root refused with 413, 10 accepted then 10 more refused; server peak RSS \(peak) MiB")
        }

        /// Issue 13's second attack: 53 PATCHes, each adding a 400-deep value one level below the last
        /// accepted one (it crashed the server at about 21,000 levels). With the default `--max-depth`
        /// (64) all 53 are refused; at the ceiling (500) the first is accepted and the 52 others are
        /// refused, each 422 naming `--max-depth`. The 401-level model is streamed, kept in `--data`
        /// and loaded again by a restarted server. Bound: 100 MiB.
        @Test(.timeLimit(.minutes(3)), arguments: [64, 500])
        func fiftyThreeDeepPatchesStopAtTheDepthLimit(maxDepth: Int) throws {
            let bound = MemoryBound(mebibytes: 100)
            try withTemporaryDirectory { directory in
                let arguments = ["--max-depth", "\(maxDepth)", "--data", directory]
                let kept: ModelState = try {
                    let server = try HostileServer(arguments, bound: bound)
                    #expect(try server.send("PUT", "/models/m", "{}").status == 201)
                    let watch = try EventWatch(server)
                    let deep = nestedObject(400)
                    var deepest = ""  // the pointer of the deepest object accepted so far
                    var accepted = 0
                    for _ in 0..<53 {
                        let before = try server.state(of: "m")
                        let patch = #"[{"op":"add","path":"\#(deepest)/a","value":\#(deep)}]"#
                        let response = try server.send("PATCH", "/models/m", patch, type: Self.jsonPatch)
                        if response.status == 200 {
                            accepted += 1
                            deepest += repeatedPointer(400)
                        } else {
                            expectLimitProblem(response, 422, flag: "--max-depth")
                            #expect(try server.state(of: "m") == before)
                        }
                        #expect(server.isUp)
                        try server.requireMemory()
                    }
                    #expect(accepted == (maxDepth >= 401 ? 1 : 0))
                    #expect(try watch.events().count == accepted)
                    let peak = server.expectPeakMemory()
                    print(
                        "Hostile deep patches (--max-depth \(maxDepth)): \(accepted) of 53 accepted, the rest refused with 422; peak RSS \(peak) MiB"
                    )
                    return try server.state(of: "m")
                }()  // the server gets SIGTERM here; then the same data directory again
                let restarted = try HostileServer(arguments, bound: bound)
                let loaded = try restarted.state(of: "m")
                #expect(loaded.status == 200 && loaded.body == kept.body && loaded.etag == kept.etag)
                #expect(restarted.isUp)
            }
        }

        /// Deep growth one level per write, rotating through every write path (PUT at a pointer, merge
        /// patch, JSON Patch, form, POST merge), and array nesting one level per append. Default
        /// `--max-depth` (64): exactly 63 object levels and 62 array levels are accepted, then each path
        /// is refused 422 naming `--max-depth`, with nothing changed and no event. Bound: 100 MiB.
        @Test(.timeLimit(.minutes(2))) func deepGrowthBySuccessiveWritesStopsAtTheDepthLimitOnEveryPath() throws {
            let bound = MemoryBound(mebibytes: 100)
            let server = try HostileServer(bound: bound)
            #expect(try server.send("PUT", "/models/m", "{}").status == 201)
            #expect(try server.send("PUT", "/models/l", #"{"l":[]}"#).status == 201)
            let watch = try EventWatch(server)

            /// Adds `{}` as member `a` of the object at `pointer` in m, by write path `way`.
            func deepen(_ pointer: String, way: Int) throws -> TestHTTPResponse {
                switch way % 5 {
                case 0: try server.send("PUT", "/models/m\(pointer)/a", "{}")
                case 1: try server.send("PATCH", "/models/m\(pointer)", #"{"a":{}}"#, type: Self.mergePatch)
                case 2: try server.send("PATCH", "/models/m", #"[{"op":"add","path":"\#(pointer)/a","value":{}}]"#, type: Self.jsonPatch)
                case 3: try server.send("POST", "/models/m\(pointer)", "a=%7B%7D", type: Self.form)
                default: try server.send("POST", "/models/m\(pointer)", #"{"a":{}}"#)
                }
            }
            var pointer = "", objectLevels = 0
            for step in 0..<80 {
                let response = try deepen(pointer, way: step)
                guard response.status == 200 else {
                    expectLimitProblem(response, 422, flag: "--max-depth")
                    break
                }
                objectLevels += 1
                pointer += "/a"
                try server.requireMemory()
            }
            #expect(objectLevels == 63)
            var arrayPointer = "/l", arrayLevels = 0
            for _ in 0..<80 {
                let response = try server.send("POST", "/models/l\(arrayPointer)", "[]")
                guard response.status == 200 else {
                    expectLimitProblem(response, 422, flag: "--max-depth")
                    break
                }
                arrayLevels += 1
                arrayPointer += "/0"
            }
            #expect(arrayLevels == 62)
            #expect(try watch.events().count == objectLevels + arrayLevels)

            let before = try server.state(of: "m")
            for way in 0..<5 {
                expectLimitProblem(try deepen(pointer, way: way), 422, flag: "--max-depth")
            }
            expectLimitProblem(try server.send("POST", "/models/l\(arrayPointer)", "[]"), 422, flag: "--max-depth")
            // A deep value set at a shallow pointer is measured whole.
            expectLimitProblem(try server.send("PUT", "/models/m/b", nestedObject(64)), 422, flag: "--max-depth")
            #expect(try server.state(of: "m") == before)
            #expect(try watch.events().isEmpty)
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print(
                "Hostile depth: \(objectLevels) object and \(arrayLevels) array levels accepted, then refused on every path; peak RSS \(peak) MiB"
            )
        }

        /// Size growth by appends with `--max-model-size 1048576 --max-store-size 3145728`: 4 KiB strings
        /// are appended until 413 naming `--max-model-size`, at exactly the count the documented size
        /// (compact JSON plus one separator per member or element) allows; removing 10 elements makes
        /// room for exactly 10. Models of 900 KB are then added until 413 naming `--max-store-size`;
        /// dropping one makes room again. Bound: 100 MiB.
        @Test(.timeLimit(.minutes(3))) func sizeGrowthByAppendsStopsAtTheModelAndStoreLimits() throws {
            let bound = MemoryBound(mebibytes: 100)
            let server = try HostileServer(["--max-model-size", "1048576", "--max-store-size", "3145728"], bound: bound)
            #expect(try server.send("PUT", "/models/grow", #"{"list":[]}"#).status == 201)
            let watch = try EventWatch(server)
            let element = #""\#(String(repeating: "x", count: 4_096))""#
            // {"list":[e,e,…]}: 10 + 4099 n bytes of JSON, plus one separator per non-empty container (2).
            let allowed = (1_048_576 - 12) / 4_099

            /// Appends until refused (at most `max` times) and returns how many were accepted; from one
            /// before the expected refusal on, checks that the refusal changed nothing.
            func appendUntilRefused(max: Int, refusalAfter expected: Int) throws -> Int {
                for count in 0..<max {
                    let before = count + 1 >= expected ? try server.state(of: "grow") : nil
                    let response = try server.send("POST", "/models/grow/list", element)
                    if response.status != 200 {
                        expectLimitProblem(response, 413, flag: "--max-model-size")
                        if let before { #expect(try server.state(of: "grow") == before) }
                        return count
                    }
                    try server.requireMemory()
                }
                return max
            }
            #expect(try appendUntilRefused(max: allowed + 50, refusalAfter: allowed) == allowed)
            #expect(try watch.events().count == allowed)
            for _ in 0..<10 { #expect(try server.delete("/models/grow/list/0").status == 200) }
            #expect(try appendUntilRefused(max: 50, refusalAfter: 10) == 10)
            #expect(try watch.events().count == 20)

            let filler = #"{"v":"\#(String(repeating: "f", count: 900_000))"}"#
            var added: [String] = []
            for index in 0..<10 {
                let response = try server.send("PUT", "/models/s\(index)", filler)
                if response.status != 201 {
                    expectLimitProblem(response, 413, flag: "--max-store-size")
                    #expect(try server.get("/models/s\(index)").status == 404)
                    break
                }
                added.append("s\(index)")
            }
            #expect(added.count == 2)  // 1 MiB + 2 × 900 KB fit in 3 MiB, a third does not
            #expect(try watch.events().count == added.count)
            let next = "s\(added.count)"
            #expect(try server.delete("/models/\(added[0])").status == 200)
            #expect(try server.send("PUT", "/models/\(next)", filler).status == 201)
            #expect(try watch.events().count == 2)
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print(
                "Hostile appends: \(allowed) appends of 4 KiB accepted then refused, store refused the third 900 KB model; peak RSS \(peak) MiB"
            )
        }

        /// Growth by model count with `--max-store-size 262144`: models `{}` with 128-character names,
        /// one per PUT. Each costs the server several hundred bytes of RSS (500 to 900 measured). Expected:
        /// 413 naming `--max-store-size` by the time the names alone pass the limit (2,016 models of
        /// 130 bytes), the refused model absent and no event for it. Bound: 100 MiB.
        ///
        /// Each model counts `StoreLimits.modelOverhead` (1,024) bytes besides its JSON, so the limit
        /// admits about 250 of them here (about 1 KiB of RSS each was measured).
        @Test(.timeLimit(.minutes(3))) func manySmallModelsAreBoundedByTheStoreLimit() throws {
            let bound = MemoryBound(mebibytes: 100)
            let server = try HostileServer(["--max-store-size", "262144"], bound: bound)
            let watch = try EventWatch(server)
            let residentBefore = server.memory().residentKB
            var created = 0
            var refusal: (name: String, response: TestHTTPResponse)?
            for index in 0..<3_000 {
                let name = String(format: "m%05d", index) + String(repeating: "n", count: 122)
                let response = try server.send("PUT", "/models/\(name)", "{}")
                guard response.status == 201 else {
                    refusal = (name, response)
                    break
                }
                created += 1
                if index % 100 == 0 { try server.requireMemory() }
            }
            let bytesPerModel = (server.memory().residentKB - residentBefore) * 1_024 / max(created, 1)
            #expect(created <= 262_144 / 130)
            let refused = try #require(refusal)
            expectLimitProblem(refused.response, 413, flag: "--max-store-size")
            #expect(try server.get("/models/\(refused.name)").status == 404)
            #expect(try watch.events().count == created)
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print(
                "Hostile model count: \(created) models of {} with 128-character names accepted under a 256 KiB store limit, "
                    + "about \(bytesPerModel) bytes of RSS each; peak RSS \(peak) MiB")
        }
    }
}
