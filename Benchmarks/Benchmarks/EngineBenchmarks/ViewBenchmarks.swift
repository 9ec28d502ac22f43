import Benchmark
import DequeModule
import LiveBindEngine

// Arranged views (issue 29): one change of an n-row array kept in an `ArrangedArray` ("open orders,
// newest first, top 50"), against filtering and sorting the whole array again after it — the work a
// page or a server without incremental views does per change.

/// An order as a view sorts it: a status, a time, an amount.
func makeOrder(_ id: Int) -> JSON {
    ["id": .int(id), "status": .string(id % 3 == 0 ? "open" : "done"), "time": .int((id &* 7919) % 1_000_003), "total": .int(id % 500)]
}

/// The view both sides compute.
let openNewestFirst = try! ViewQuery(where: "status:eq:open", order: "-time", limit: 50)

/// One array and its arranged view, built once per length (a million rows take seconds) and changed
/// by every sample after.
final class ViewFixture: @unchecked Sendable {
    let view: ArrangedArray
    var rows: [JSON]
    var next = 0

    init(_ count: Int) {
        rows = (0..<count).map(makeOrder)
        view = ArrangedArray(rows, query: openNewestFirst)
    }

    /// The next change: a row's status flips, or its time moves (a row entering, leaving, or moving).
    func change() -> Change {
        next &+= 1
        let index = (next &* 104_729) % rows.count
        guard case .object(var members) = rows[index] else { return Change(kind: .set, path: Path(["items"])) }
        let field = next % 2 == 0 ? "status" : "time"
        let value: JSON = field == "status" ? (members["status"] == "open" ? "done" : "open") : .int((next &* 31) % 1_000_003)
        members[field] = value
        rows[index] = .object(members)
        return Change(kind: .set, path: Path(["items", String(index), field]), value: value)
    }
}

nonisolated(unsafe) var viewFixtures: [Int: ViewFixture] = [:]

func viewFixture(_ count: Int) -> ViewFixture {
    if let fixture = viewFixtures[count] { return fixture }
    let fixture = ViewFixture(count)
    viewFixtures[count] = fixture
    return fixture
}

func registerViewBenchmarks() {
    let items = Path(["items"])
    for count in [10_000, 100_000, 1_000_000] {
        Benchmark("view/incremental/\(count)", configuration: scalarConfiguration) { benchmark in
            let fixture = viewFixture(count)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(fixture.view.apply(fixture.change(), at: items))
            }
            benchmark.stopMeasurement()
        }

        Benchmark("view/refilter-and-sort/\(count)", configuration: largeConfiguration) { benchmark in
            let fixture = viewFixture(count)
            let filter = openNewestFirst.filter!
            let time = ElementPath(["time"])
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                _ = fixture.change()
                let shown = fixture.rows.filter(filter.holds).sorted { a, b in
                    (time.value(in: a)?.doubleValue ?? 0) > (time.value(in: b)?.doubleValue ?? 0)
                }.prefix(50)
                blackHole(Array(shown))
            }
            benchmark.stopMeasurement()
        }
    }
}
