import Foundation
import Testing

/// Scripts whose requests are small and whose work is not: copy and move chains inside one JSON Patch,
/// and form keys of thousands of components.
extension ReliabilityTests.HostileSequenceTests {
    @Suite("Hostile chains and forms") struct HostileChainTests {
        static let jsonPatch = "application/json-patch+json"
        static let form = "application/x-www-form-urlencoded"

        /// `--max-model-size 1048576` on a model holding a 64 KiB string. Expected, each refusal with
        /// nothing changed and no event, each answer within 5 s:
        /// - 1,000 `move`s of it back and forth: 413 naming `--max-model-size` (the write work, four times
        ///   the model limit), though the patch would end where it started; 10 of them are accepted;
        /// - a chain of `copy` /c0 → /c1 → … → /c20: 413 naming `--max-model-size`;
        /// - 70 `copy` of /d into /d/d, each one level deeper: 422 naming `--max-depth`;
        /// - a `move` of a 60-deep value (61 levels) 4 levels further down: 422 naming `--max-depth`;
        /// - 1,001 operations: 422 naming `--max-patch-operations`.
        /// Bound: 100 MiB.
        @Test(.timeLimit(.minutes(2))) func copyAndMoveChainsAreRefusedByTheWorkDepthAndOperationLimits() throws {
            let bound = MemoryBound(mebibytes: 100)
            let server = try HostileServer(["--max-model-size", "1048576"], bound: bound)
            let big = String(repeating: "v", count: 64 << 10)
            let box = #""box":{"b":{"c":{"d":{}}}},"deep":\#(nestedObject(60))"#  // 61 levels; 65 inside the box
            #expect(try server.send("PUT", "/models/m", #"{"c0":"\#(big)","d":{"e":1},\#(box)}"#).status == 201)
            let watch = try EventWatch(server)

            func patch(_ operations: [String]) throws -> TestHTTPResponse {
                let started = ContinuousClock.now
                let response = try server.send(
                    "PATCH", "/models/m", "[" + operations.joined(separator: ",") + "]",
                    type: Self.jsonPatch)
                #expect(ContinuousClock.now - started < server.scaled(.seconds(5)), "\(operations.count) operations took too long")
                return response
            }
            func pingPong(_ count: Int) -> [String] {
                (0..<count).map { $0 % 2 == 0 ? #"{"op":"move","from":"/c0","path":"/x"}"# : #"{"op":"move","from":"/x","path":"/c0"}"# }
            }
            let refusals: [(name: String, operations: [String], status: Int, flag: String)] = [
                ("1,000 moves back and forth", pingPong(1_000), 413, "--max-model-size"),
                (
                    "a chain of 20 copies", (0..<20).map { #"{"op":"copy","from":"/c\#($0)","path":"/c\#($0 + 1)"}"# },
                    413, "--max-model-size"
                ),
                (
                    "70 copies one level deeper each", Array(repeating: #"{"op":"copy","from":"/d","path":"/d/d"}"#, count: 70),
                    422, "--max-depth"
                ),
                (
                    "a move of a 60-deep value 4 levels down", [#"{"op":"move","from":"/deep","path":"/box/b/c/d/deep"}"#],
                    422, "--max-depth"
                ),
                (
                    "1,001 operations", Array(repeating: #"{"op":"test","path":"/d/e","value":1}"#, count: 1_001),
                    422, "--max-patch-operations"
                )
            ]
            let before = try server.state(of: "m")
            for round in 1...3 {
                for refusal in refusals {
                    let response = try patch(refusal.operations)
                    expectLimitProblem(response, refusal.status, flag: refusal.flag)
                    #expect(try server.state(of: "m") == before, "\(refusal.name), round \(round)")
                    #expect(server.isUp)
                    try server.requireMemory()
                }
            }
            #expect(try watch.events().isEmpty)

            // The same shapes, short enough: accepted, one event each.
            #expect(try patch(pingPong(10)).status == 200)
            #expect(try patch((0..<3).map { #"{"op":"copy","from":"/c\#($0)","path":"/c\#($0 + 1)"}"# }).status == 200)
            #expect(try patch(Array(repeating: #"{"op":"copy","from":"/d","path":"/d/d"}"#, count: 10)).status == 200)
            #expect(try patch(Array(repeating: #"{"op":"test","path":"/d/e","value":1}"#, count: 1_000)).status == 200)
            #expect(try watch.events().count == 3)  // the tests change nothing: no commit, no event
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print("Hostile chains: \(refusals.count) kinds of chains refused 3 times each, short ones accepted; peak RSS \(peak) MiB")
        }

        /// A form key `a.a.a…` of 10,000 components, 20 times, then 40 such keys in one body (800 KB):
        /// each answer 422 naming `--max-depth` within 5 s, nothing changed, no event. The depth limit's
        /// own edge holds: a key of 64 components is accepted, one of 65 refused. Default flags. Bound: 100 MiB.
        @Test(.timeLimit(.minutes(2))) func formKeysOfTenThousandComponentsAreRefusedQuickly() throws {
            let bound = MemoryBound(mebibytes: 100)
            let server = try HostileServer(bound: bound)
            #expect(try server.send("PUT", "/models/f", "{}").status == 201)
            let watch = try EventWatch(server)
            func key(_ components: Int) -> String { Array(repeating: "a", count: components).joined(separator: ".") }
            func post(_ body: String) throws -> TestHTTPResponse {
                let started = ContinuousClock.now
                let response = try server.send("POST", "/models/f", body, type: Self.form)
                #expect(ContinuousClock.now - started < server.scaled(.seconds(5)), "a form of \(body.utf8.count) bytes took too long")
                return response
            }

            let before = try server.state(of: "f")
            let long = key(10_000) + "=1"
            for _ in 0..<20 {
                expectLimitProblem(try post(long), 422, flag: "--max-depth")
                try server.requireMemory()
            }
            expectLimitProblem(try post(Array(repeating: long, count: 40).joined(separator: "&")), 422, flag: "--max-depth")
            #expect(try server.state(of: "f") == before)
            #expect(try watch.events().isEmpty)

            // 64 components: the root and 63 objects made as parents, the deepest at level 64.
            #expect(try post(key(63) + ".b=1").status == 200)
            let edge = try server.state(of: "f")
            expectLimitProblem(try post(key(64) + ".c=1"), 422, flag: "--max-depth")
            // Now 63 of its parents exist: the walk down finds them and still refuses.
            expectLimitProblem(try post(long), 422, flag: "--max-depth")
            #expect(try server.state(of: "f") == edge)
            #expect(try watch.events().count == 1)
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print("Hostile forms: 21 forms with 10,000-component keys refused with 422; peak RSS \(peak) MiB")
        }
    }
}
