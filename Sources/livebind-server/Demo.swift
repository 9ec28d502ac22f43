import LiveBind
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The built-in demo: a sensor whose temperature drifts, a readings table that keeps the last 20
/// rows, and an orders table with inserts, replaces and removes. Each `tick()` is one second.
/// Bindings derive the rest: the sensor's status (threshold) and label (format), the readings'
/// count, average and maximum, the orders' count and total quantity.
final class Demo: Sendable {
    let store: Store
    let logger: Logger
    private struct State {
        var tick = 0
        var temperature = 21.0
        var nextOrder = 1004
    }
    private let state = Mutex(State())

    static let customers = ["Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances"]
    static let products = ["Basil", "Tomatoes", "Chili", "Mint", "Lettuce", "Thyme"]
    static let steps = ["pending", "packed", "shipped", "delivered"]
    static let maxReadings = 20

    init(store: Store, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// The demo's models and bindings, as a definition file would declare them.
    static let definition: JSON = [
        "models": [
            "sensor": ["name": "Greenhouse", "temperature": 21.0, "threshold": 24.0, "unit": "°C"],
            "readings": ["items": []],
            "orders": [
                "items": [
                    order(id: 1001, customer: "Ada", product: "Basil", quantity: 2, step: "shipped"),
                    order(id: 1002, customer: "Grace", product: "Mint", quantity: 1, step: "packed"),
                    order(id: 1003, customer: "Linus", product: "Chili", quantity: 5, step: "pending")
                ]
            ]
        ],
        "bindings": [
            [
                "id": "sensor-status", "source": "sensor.temperature", "target": "sensor.status",
                "transform": ["name": "threshold", "value": 24, "above": "hot", "below": "ok"]
            ],
            [
                "id": "sensor-label", "source": "sensor.temperature", "target": "sensor.label",
                "transform": ["name": "format", "pattern": "%.1f °C"]
            ],
            ["id": "readings-count", "source": "readings.items", "target": "readings.count", "transform": "count"],
            [
                "id": "readings-average", "source": "readings.items", "target": "readings.average",
                "transform": ["name": "avg", "of": "value"]
            ],
            [
                "id": "readings-max", "source": "readings.items", "target": "readings.max",
                "transform": ["name": "max", "of": "value"]
            ],
            ["id": "orders-count", "source": "orders.items", "target": "orders.count", "transform": "count"],
            [
                "id": "orders-quantity", "source": "orders.items", "target": "orders.quantity",
                "transform": ["name": "sum", "of": "quantity"]
            ]
        ]
    ]

    /// Continues from models a data directory kept: the temperature where it was, new readings and
    /// orders with ids after the existing ones (a row's id stays unique across restarts).
    func continueFromStore() {
        let items = Path.root.appending("items")
        let readings = (try? store.value(of: "readings", at: items))?.arrayValue ?? []
        let lastReading = readings.compactMap { $0.objectMember("id")?.doubleValue }.max().map { Int($0) } ?? 0
        let orders = (try? store.value(of: "orders", at: items))?.arrayValue ?? []
        let lastOrder = orders.compactMap { $0.objectMember("id")?.stringValue?.dropFirst(2) }.compactMap { Int($0) }.max() ?? 0
        let temperature = (try? store.value(of: "sensor", at: Path.root.appending("temperature")))?.doubleValue
        state.withLock { state in
            state.tick = max(state.tick, lastReading)
            state.nextOrder = max(state.nextOrder, lastOrder + 1)
            if let temperature { state.temperature = temperature }
        }
    }

    /// One second of life: the temperature drifts, a reading is added, an order changes.
    func tick() {
        let (tick, temperature) = state.withLock { state in
            state.tick += 1
            let drift = Double.random(in: -0.6...0.6) + (21.5 - state.temperature) * 0.05
            state.temperature = ((state.temperature + drift) * 10).rounded() / 10
            return (state.tick, state.temperature)
        }
        do {
            try store.set(.double(temperature), at: .root.appending("temperature"), in: "sensor")
            try addReading(tick: tick, value: temperature)
            try changeOrders()
        } catch {
            logger.warning("demo tick failed: \(error)")
        }
    }

    /// Appends a reading and drops the oldest past `maxReadings`, as one write.
    private func addReading(tick: Int, value: Double) throws {
        let items = Path.root.appending("items")
        try store.write("readings") { (editor: inout ModelEditor) throws(StoreError) in
            let index = try editor.append(["id": .int(tick), "time": .string(Self.clock()), "value": .double(value)], to: items)
            if index >= Self.maxReadings { try editor.remove(at: items.appending("0")) }
        }
    }

    /// Inserts a new order, advances one order's status, or removes a delivered one.
    private func changeOrders() throws {
        let items = Path.root.appending("items")
        let newID = state.withLock { state in
            defer { state.nextOrder += 1 }
            return state.nextOrder
        }
        try store.write("orders") { (editor: inout ModelEditor) throws(StoreError) in
            guard case .array(let rows) = try editor.value(at: items) else { return }
            let delivered = rows.firstIndex { $0.objectMember("status") == "delivered" }
            let roll = Int.random(in: 0..<10)
            if let delivered, roll < 3 || rows.count > 8 {
                try editor.remove(at: items.appending("\(delivered)"))
            } else if roll < 6 || rows.isEmpty {
                let order = Self.order(
                    id: newID, customer: Self.customers.randomElement()!,
                    product: Self.products.randomElement()!, quantity: Int.random(in: 1...6),
                    step: "pending")
                try editor.insert(order, at: Int.random(in: 0...rows.count), in: items)
            } else {
                let index = Int.random(in: 0..<rows.count)
                let current = rows[index].objectMember("status")?.stringValue ?? "pending"
                let next = Self.steps[min((Self.steps.firstIndex(of: current) ?? 0) + 1, Self.steps.count - 1)]
                guard case .object(var order) = rows[index] else { return }
                order["status"] = .string(next)
                try editor.replace(at: index, in: items, with: .object(order))
            }
        }
    }

    static func order(id: Int, customer: String, product: String, quantity: Int, step: String) -> JSON {
        [
            "id": .string("A-\(id)"), "customer": .string(customer), "item": .string(product),
            "quantity": .int(quantity), "status": .string(step)
        ]
    }

    /// The UTC wall clock as `hh:mm:ss`.
    static func clock() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}

extension JSON {
    /// The member `name`, if this is an object that has it.
    func objectMember(_ name: String) -> JSON? {
        if case .object(let members) = self { return members[name] }
        return nil
    }
}
