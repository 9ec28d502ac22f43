import DequeModule

/// The incremental state behind `count`, `sum`, `avg`, `min` and `max`.
///
/// Count and sum are running totals; `min`/`max` rescan only when the current extremum leaves. A sum of
/// integers is exact (until it overflows); a sum with any other number is a `Double`, which a removal
/// cannot undo exactly (1e17 + 1 - 1e17 is 0), so removing or replacing one rescans the array.
/// Elements that are not numbers (or lack the `of` member) count for `count` but not for the others.
struct NumericAggregator: Aggregator {
    enum Kind: String, Sendable, CaseIterable { case count, sum, avg, min, max }

    let kind: Kind
    /// Where the number sits inside an element (empty: the element itself).
    let key: [String]
    private(set) var rescans = 0
    private var count = 0
    private var numbers = 0
    private var doubles = 0
    private var sum = 0.0
    private var intSum: Int? = 0
    private var extremum: JSON?

    init(kind: Kind, key: [String]) {
        self.kind = kind
        self.key = key
    }

    var result: JSON {
        switch kind {
        case .count: return .int(count)
        case .sum:
            if doubles == 0, let intSum { return .int(intSum) }
            return .double(sum)
        case .avg:
            guard numbers > 0 else { return .null }
            if doubles == 0, let intSum { return .double(Double(intSum) / Double(numbers)) }
            return .double(sum / Double(numbers))
        case .min, .max: return extremum ?? .null
        }
    }

    mutating func reset(_ elements: Deque<JSON>) {
        count = 0; numbers = 0; doubles = 0; sum = 0; intSum = 0; extremum = nil
        for element in elements { add(element) }
    }

    mutating func insert(_ element: JSON, elements: Deque<JSON>) { add(element) }

    mutating func remove(_ element: JSON, elements: Deque<JSON>) {
        let number = subtract(element)
        if number != nil, sumIsInexact { return rescan(elements) }
        if tracksExtremum, let number, let extremum, number == extremum { rescan(elements) }
    }

    mutating func replace(_ old: JSON, with new: JSON, elements: Deque<JSON>) {
        let oldNumber = subtract(old)
        count += 1
        let newNumber = addTotals(new)
        if oldNumber != nil, sumIsInexact { return rescan(elements) }
        guard tracksExtremum else { return }
        if let oldNumber, let current = extremum, oldNumber == current {
            if let newNumber, newNumber == oldNumber || isBetter(newNumber, than: oldNumber) {
                extremum = newNumber
            } else {
                // The extremum was replaced by something worse: only a scan can tell the new one.
                rescan(elements)
            }
        } else if let newNumber {
            if let current = extremum { if isBetter(newNumber, than: current) { extremum = newNumber } } else { extremum = newNumber }
        }
    }

    private var tracksExtremum: Bool { kind == .min || kind == .max }

    /// Whether the result is the `Double` running sum, which a subtraction may have left inexact.
    private var sumIsInexact: Bool { (kind == .sum || kind == .avg) && (doubles > 0 || intSum == nil) }

    private mutating func rescan(_ elements: Deque<JSON>) {
        rescans += 1
        let saved = rescans
        reset(elements)
        rescans = saved
    }

    private mutating func add(_ element: JSON) {
        count += 1
        guard let number = addTotals(element), tracksExtremum else { return }
        if let current = extremum { if isBetter(number, than: current) { extremum = number } } else { extremum = number }
    }

    /// Adds the element's number to the running totals (not to `count`); returns the number.
    private mutating func addTotals(_ element: JSON) -> JSON? {
        guard let number = number(in: element) else { return nil }
        numbers += 1
        sum += number.doubleValue ?? 0
        if case .int(let value) = number {
            if let total = intSum {
                let (sum, overflow) = total.addingReportingOverflow(value)
                intSum = overflow ? nil : sum
            }
        } else {
            doubles += 1
        }
        return number
    }

    /// Takes the element out of `count` and the running totals; returns its number.
    private mutating func subtract(_ element: JSON) -> JSON? {
        count -= 1
        guard let number = number(in: element) else { return nil }
        numbers -= 1
        sum -= number.doubleValue ?? 0
        if case .int(let value) = number {
            if let total = intSum {
                let (difference, overflow) = total.subtractingReportingOverflow(value)
                intSum = overflow ? nil : difference
            }
        } else {
            doubles -= 1
        }
        if numbers == 0 {
            sum = 0; intSum = 0; doubles = 0; extremum = nil
        }
        return number
    }

    private func isBetter(_ candidate: JSON, than current: JSON) -> Bool {
        guard let a = candidate.doubleValue, let b = current.doubleValue else { return false }
        return kind == .min ? a < b : a > b
    }

    private func number(in element: JSON) -> JSON? {
        var value = element
        for component in key {
            switch value {
            case .object(let members): guard let next = members[component] else { return nil }; value = next
            case .array(let elements):
                guard let index = Int(component), elements.indices.contains(index) else { return nil }
                value = elements[index]
            default: return nil
            }
        }
        switch value {
        case .int, .double: return value
        default: return nil
        }
    }
}
