import LiveBindEngine
/// A location's values over a stretch of history: the value it had at the start, then each change.
struct HistorySeries: Sendable {
    /// One change of the location.
    struct Point: Sendable, Equatable {
        /// The event id of the write that made it, and when (milliseconds since 1970).
        var sequence: UInt64, time: Int64
        /// The location's value after it; nil: the location was removed.
        var value: JSON?
        /// Who made it, when asked for.
        var origin: CommitOrigin?
    }

    /// The location's value at the start (nil: it did not exist).
    var start: JSON?
    var points: [Point] = []
    /// The last event the series covers.
    var through: UInt64

    /// With a step: the points in buckets that wide, aligned to multiples of it since 1970 (empty
    /// ones left out), in place of ``points``.
    var buckets: [Bucket] = []

    /// Puts `point` in its bucket of `step` milliseconds (a removal is in none).
    mutating func add(_ point: Point, step: Int64) {
        guard let value = point.value else { return }
        let start = point.time - ((point.time % step) + step) % step
        if buckets.last?.time != start { buckets.append(Bucket(time: start, first: value, last: value)) }
        buckets[buckets.count - 1].add(value)
    }

    /// The values of a location inside one step: first and last, and over the numbers min, max, mean.
    struct Bucket: Sendable, Equatable {
        var time: Int64
        var count = 0
        var first: JSON, last: JSON
        var min: Double?, max: Double?
        private var sum = 0.0, numbers = 0
        var average: Double? { numbers > 0 ? sum / Double(numbers) : nil }

        init(time: Int64, first: JSON, last: JSON) {
            self.time = time
            self.first = first
            self.last = last
        }

        mutating func add(_ value: JSON) {
            count += 1
            last = value
            let number: Double? =
                switch value {
                case .int(let integer): Double(integer)
                case .double(let double): double
                default: nil
                }
            guard let number else { return }
            min = Swift.min(min ?? number, number)
            max = Swift.max(max ?? number, number)
            sum += number
            numbers += 1
        }
    }
}
