import Foundation
import Testing

/// Bindings made with `POST /bindings` whose transforms write more than they read: fan-out of long
/// `format` patterns, `each` over arrays, and chains. A binding's write passes the same limits inside
/// its commit as any other write: the refused write changes nothing and the binding reports the limit
/// as its `lastError`, while the write that triggered it stands.
extension ReliabilityTests.HostileSequenceTests {
    @Suite("Hostile bindings") struct HostileBindingTests {
        static let modelLimit = 262_144
        static let arguments = ["--max-model-size", "\(modelLimit)"]

        /// A binding entry for `POST /bindings`.
        static func binding(_ source: String, _ target: String, pattern: String? = nil, each: Bool = false) -> String {
            var members = [#""source":"\#(source)""#, #""target":"\#(target)""#]
            if let pattern { members.append(#""transform":{"name":"format","pattern":"\#(pattern)"}"#) }
            if each { members.append(#""each":true"#) }
            return "{" + members.joined(separator: ",") + "}"
        }

        /// Makes a binding: always 201 (a binding whose write is refused exists, and says why).
        static func bind(_ server: HostileServer, _ entry: String) throws -> [String: Any] {
            let response = try server.send("POST", "/bindings", entry)
            #expect(response.status == 201, "\(response.status) \(response.text.prefix(300))")
            return try response.object()
        }

        static func lastError(_ binding: [String: Any]) -> String? { binding["lastError"] as? String }

        /// `--max-model-size 262144`. 40 bindings from `src.v` to `out.o0…o39`, each formatting the
        /// number into 16 KiB (a 1-byte write fans out to 640 KiB): the first ones are made and written,
        /// the rest are made with `lastError` naming `maxModelBytes` and leave `out` exactly as it was,
        /// with no event. A write to `src.v` (200) updates exactly the working ones; `out` stays under the
        /// limit. A binding placing a 60-deep value 4 levels further down reports `maxDepth`. Bound: 100 MiB.
        @Test(.timeLimit(.minutes(2))) func formatFanOutStopsAtTheModelLimit() throws {
            let bound = MemoryBound(mebibytes: 100)
            let server = try HostileServer(Self.arguments, bound: bound)
            #expect(try server.send("PUT", "/models/src", #"{"v":1,"deep":\#(nestedObject(60))}"#).status == 201)
            #expect(try server.send("PUT", "/models/out", #"{"x":{"y":{"z":{"w":{}}}}}"#).status == 201)
            let watch = try EventWatch(server)
            let pattern = String(repeating: "p", count: 16_384) + "%d"
            var working = 0, refused = 0
            for index in 0..<40 {
                let before = try server.state(of: "out")
                let binding = try Self.bind(server, Self.binding("src.v", "out.o\(index)", pattern: pattern))
                if let error = Self.lastError(binding) {
                    #expect(error.contains("maxModelBytes"), "\(error)")
                    #expect(try server.state(of: "out") == before)
                    #expect(try watch.events().isEmpty)
                    refused += 1
                } else {
                    #expect(refused == 0, "binding \(index) worked after one was refused")
                    #expect(try watch.events().count == 1)
                    working += 1
                }
                try server.requireMemory()
            }
            #expect(working > 0 && working < 16 && working + refused == 40)

            #expect(try server.send("PUT", "/models/src/v", "2").status == 200)
            let out = try server.state(of: "out")
            #expect(out.body.utf8.count <= Self.modelLimit)
            #expect(out.body.components(separatedBy: "p2\"").count - 1 == working)
            #expect(try watch.events().count == 1 + working)  // the source's write, then one per working binding

            let beforeDeep = try server.state(of: "out")
            let deep = try Self.bind(server, Self.binding("src.deep", "out.x.y.z.w.deep"))
            #expect(Self.lastError(deep)?.contains("maxDepth") == true, "\(deep)")
            #expect(try server.state(of: "out") == beforeDeep)
            #expect(try watch.events().isEmpty)
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print(
                "Hostile fan-out: \(working) of 40 amplifying bindings written, \(refused) refused at the model limit; peak RSS \(peak) MiB"
            )
        }

        /// `each` over an array: 100 numbers, each formatted into 4 KiB, would be 400 KiB in a 256 KiB
        /// model: the binding is made with `lastError` naming `maxModelBytes` and `out` unchanged. With 10
        /// source elements it mirrors them; 90 appends to the source are all accepted (200) while the
        /// target stops growing below the limit. Bound: 100 MiB.
        @Test(.timeLimit(.minutes(2))) func eachOverAnArrayStopsAtTheModelLimit() throws {
            let bound = MemoryBound(mebibytes: 100)
            let server = try HostileServer(Self.arguments, bound: bound)
            let hundred = (1...100).map(String.init).joined(separator: ",")
            #expect(try server.send("PUT", "/models/src", #"{"list":[\#(hundred)]}"#).status == 201)
            #expect(try server.send("PUT", "/models/out", #"{"list":[]}"#).status == 201)
            let watch = try EventWatch(server)
            let before = try server.state(of: "out")
            let pattern = String(repeating: "q", count: 4_096) + "%d"
            let binding = try Self.bind(server, Self.binding("src.list", "out.list", pattern: pattern, each: true))
            #expect(Self.lastError(binding)?.contains("maxModelBytes") == true, "\(binding)")
            #expect(try server.state(of: "out") == before)
            #expect(try watch.events().isEmpty)

            #expect(try server.send("PUT", "/models/src/list", "[" + (1...10).map(String.init).joined(separator: ",") + "]").status == 200)
            #expect(
                try server.get("/models/out/list").json() as? [String] == (1...10).map { String(repeating: "q", count: 4_096) + "\($0)" })
            for value in 11...100 {
                #expect(try server.send("POST", "/models/src/list", "\(value)").status == 200)
                if value % 10 == 0 { try server.requireMemory() }
            }
            #expect((try server.get("/models/src/list").json() as? [Int])?.count == 100)
            let out = try server.state(of: "out")
            #expect(out.body.utf8.count <= Self.modelLimit)
            let mirrored = (try server.get("/models/out/list").json() as? [String])?.count ?? 0
            #expect(mirrored > 10 && mirrored < 64)
            let id = try #require(binding["id"] as? String)
            #expect(Self.lastError(try server.get("/bindings/\(id)").object())?.contains("maxModelBytes") == true)
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print("Hostile each: target mirrored \(mirrored) of 100 elements, the rest refused at the model limit; peak RSS \(peak) MiB")
        }

        /// `c.v0 → c.v1 → … → c.v40` made with `POST /bindings`, each link appending a dot (`%s.`): a write
        /// at the head reaches the tail, and no link reports an error (issue 13, item 4: propagation stopped
        /// at link 33 with "bindings form a loop that does not settle"). Bound: 100 MiB.
        @Test(.timeLimit(.minutes(2))) func aChainOfFortyBindingsCarriesAWriteToItsTail() throws {
            let bound = MemoryBound(mebibytes: 100)
            let server = try HostileServer(Self.arguments, bound: bound)
            #expect(try server.send("PUT", "/models/c", #"{"v0":"start"}"#).status == 201)
            for link in 1...40 {
                let binding = try Self.bind(server, Self.binding("c.v\(link - 1)", "c.v\(link)", pattern: "%s."))
                #expect(Self.lastError(binding) == nil, "link \(link): \(binding)")
            }
            #expect(try server.get("/models/c/v40").json() as? String == "start" + String(repeating: ".", count: 40))
            #expect(try server.send("PUT", "/models/c/v0", #""go""#).status == 200)
            let tail = "go" + String(repeating: ".", count: 40)
            let reached = try waitUntil(seconds: 10) { try server.get("/models/c/v40").json() as? String == tail }
            #expect(reached, "c.v40 is \(String(describing: try? server.get("/models/c/v40").text))")
            let links = try server.get("/bindings").object()["bindings"] as? [[String: Any]] ?? []
            #expect(links.compactMap(Self.lastError).isEmpty, "\(links.compactMap(Self.lastError).prefix(3))")
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print(
                "Hostile chain of bindings: a write at the head of 40 links \(reached ? "reached" : "did not reach") the tail; peak RSS \(peak) MiB"
            )
        }

        /// `a.v0 → a.v1 → … → a.v40`, each link appending 8 KiB (`%s` and 8 KiB): link k holds 8k KiB, so
        /// links 1–7 fit in 256 KiB and link 8 is made with `lastError` naming `maxModelBytes`, and
        /// refused again when the head is written (200); `a` stays under the limit, links 1–7 carry the
        /// new head. Bound: 100 MiB.
        @Test(.timeLimit(.minutes(2))) func anAmplifyingChainStopsAtTheLinkThatPassesTheModelLimit() throws {
            let bound = MemoryBound(mebibytes: 100)
            let server = try HostileServer(Self.arguments, bound: bound)
            #expect(try server.send("PUT", "/models/a", #"{"v0":"start"}"#).status == 201)
            let suffix = String(repeating: "s", count: 8_192)
            var ids: [String] = []
            for link in 1...40 {
                let binding = try Self.bind(server, Self.binding("a.v\(link - 1)", "a.v\(link)", pattern: "%s" + suffix))
                ids.append(binding["id"] as? String ?? "")
                if link <= 7 { #expect(Self.lastError(binding) == nil, "link \(link)") }
                if link == 8 { #expect(Self.lastError(binding)?.contains("maxModelBytes") == true, "\(binding)") }
                try server.requireMemory()
            }
            let before = try server.state(of: "a")
            #expect(try server.send("PUT", "/models/a/v0", #""again""#).status == 200)
            let seventh = "again" + String(repeating: suffix, count: 7)
            #expect(try waitUntil(seconds: 10) { try server.get("/models/a/v7").json() as? String == seventh })
            let eighth = try server.get("/bindings/\(ids[7])").object()
            #expect(Self.lastError(eighth)?.contains("maxModelBytes") == true, "\(eighth)")
            let after = try server.state(of: "a")
            #expect(after.body.utf8.count <= Self.modelLimit && after.body.utf8.count == before.body.utf8.count)
            #expect(try server.get("/models/a/v8").status == 404)
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print("Hostile amplifying chain: links 1–7 written, link 8 refused at the model limit; peak RSS \(peak) MiB")
        }
    }
}
