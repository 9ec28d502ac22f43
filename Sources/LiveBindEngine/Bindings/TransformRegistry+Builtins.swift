extension TransformRegistry {
    /// Registers `identity`, `format`, `scale`, `not`, `threshold`, `lookup` and the array aggregates.
    func registerBuiltins(viewLimits: ViewQuery.Limits) {
        register("identity") { parameters throws(BindingError) in
            try parameters.allowOnly([])
            return Transform(name: "identity", forward: { $0 }, reverse: { $0 })
        }
        register("format") { parameters throws(BindingError) in
            try parameters.allowOnly(["pattern"])
            let format = try NumberFormat(try parameters.string("pattern"))
            return Transform(name: "format", forward: { value throws in .string(try format.format(value)) })
        }
        register("scale", Self.makeScale)
        register("not") { parameters throws(BindingError) in
            try parameters.allowOnly([])
            let flip: @Sendable (JSON) throws -> JSON = { value throws in
                guard case .bool(let flag) = value else {
                    throw BindingError.transformFailed(transform: "not", reason: "expected a Boolean, found \(value.typeName)")
                }
                return .bool(!flag)
            }
            return Transform(name: "not", samples: [true, false], forward: flip, reverse: flip)
        }
        register("threshold") { parameters throws(BindingError) in
            try parameters.allowOnly(["value", "above", "below", "inclusive"])
            let limit = try parameters.number("value")
            let above = parameters["above"] ?? true, below = parameters["below"] ?? false
            let inclusive: Bool
            switch parameters["inclusive"] {
            case nil: inclusive = true
            case .bool(let flag)?: inclusive = flag
            case let other?: throw parameters.wrongType("inclusive", "true or false", other)
            }
            return Transform(
                name: "threshold",
                forward: { value throws in
                    guard let number = value.doubleValue else {
                        throw BindingError.transformFailed(transform: "threshold", reason: "expected a number, found \(value.typeName)")
                    }
                    return (inclusive ? number >= limit : number > limit) ? above : below
                })
        }
        register("lookup", Self.makeLookup)
        register("view") { parameters throws(BindingError) in
            try parameters.allowOnly(["where", "order", "offset", "limit"])
            func text(_ key: String) throws(BindingError) -> String? {
                guard let value = parameters[key] else { return nil }
                guard let text = value.stringValue else { throw parameters.wrongType(key, "a string", value) }
                return text
            }
            func count(_ key: String) throws(BindingError) -> Int? {
                guard let value = parameters[key] else { return nil }
                guard case .int(let number) = value else { throw parameters.wrongType(key, "a whole number", value) }
                return number
            }
            let (filter, order, offset, limit) = (try text("where"), try text("order"), try count("offset") ?? 0, try count("limit"))
            do throws(ViewQueryError) {
                return Transform(view: try ViewQuery(where: filter, order: order, offset: offset, limit: limit, limits: viewLimits))
            } catch {
                if let bound = error.exceeded {
                    throw .queryTooLarge(transform: "view", parameter: error.part, reason: error.reason, bound: bound)
                }
                throw .invalidParameter(transform: "view", parameter: error.part, reason: error.reason)
            }
        }
        for kind in NumericAggregator.Kind.allCases {
            register(kind.rawValue) { parameters throws(BindingError) in
                try parameters.allowOnly(["of"])
                let key: [String]
                if parameters["of"] != nil {
                    let text = try parameters.string("of")
                    do { key = try Path(dotted: text).components } catch {
                        throw .invalidParameter(transform: kind.rawValue, parameter: "of", reason: "is not a dotted path")
                    }
                } else {
                    key = []
                }
                return Transform(name: kind.rawValue) { NumericAggregator(kind: kind, key: key) }
            }
        }
    }

    /// `scale`: `value * factor + offset`, reversible; integers stay integers when the result is whole.
    private static func makeScale(_ parameters: TransformParameters) throws(BindingError) -> Transform {
        try parameters.allowOnly(["factor", "offset"])
        let factor = try parameters.number("factor", default: 1)
        let offset = try parameters.number("offset", default: 0)
        guard factor != 0, factor.isFinite, offset.isFinite else {
            throw .invalidParameter(transform: "scale", parameter: "factor", reason: "must be a finite, non-zero number")
        }
        @Sendable func number(_ value: JSON) throws -> Double {
            guard let number = value.doubleValue else {
                throw BindingError.transformFailed(transform: "scale", reason: "expected a number, found \(value.typeName)")
            }
            return number
        }
        @Sendable func result(_ number: Double, like input: JSON) -> JSON {
            if case .int = input, let integer = Int(exactly: number) { return .int(integer) }
            return .double(number)
        }
        return Transform(
            name: "scale", samples: [0, 1, 2.5, -4, 1000],
            forward: { value throws in result(try number(value) * factor + offset, like: value) },
            reverse: { value throws in result((try number(value) - offset) / factor, like: value) })
    }

    /// `lookup`: `{"table": {"key": value, ...}, "default": value}` or `{"pairs": [[from, to], ...]}`.
    /// Object tables match strings (and numbers or Booleans by their text); `pairs` keep key types.
    /// Reversible when no two keys map to the same value.
    private static func makeLookup(_ parameters: TransformParameters) throws(BindingError) -> Transform {
        try parameters.allowOnly(["table", "pairs", "default"])
        var pairs: [(JSON, JSON)] = []
        switch (parameters["table"], parameters["pairs"]) {
        case (.object(let table)?, nil):
            pairs = table.map { (JSON.string($0.key), $0.value) }
        case (nil, .array(let list)?):
            for entry in list {
                guard case .array(let pair) = entry, pair.count == 2 else {
                    throw parameters.wrongType("pairs", "an array of [from, to] pairs", entry)
                }
                pairs.append((pair[0], pair[1]))
            }
        case (let table?, nil): throw parameters.wrongType("table", "an object", table)
        case (nil, let pairs?): throw parameters.wrongType("pairs", "an array of [from, to] pairs", pairs)
        case (nil, nil): throw .invalidParameter(transform: "lookup", parameter: "table", reason: "is required (an object)")
        default: throw .invalidParameter(transform: "lookup", parameter: "pairs", reason: "cannot be combined with table")
        }
        let fallback = parameters["default"]
        var forwardTable: [JSON: JSON] = [:], reverseTable: [JSON: JSON] = [:]
        var injective = true
        for (key, value) in pairs {
            // A repeated key keeps its last value: the earlier one's reverse would lead elsewhere.
            if forwardTable.updateValue(value, forKey: key) != nil { injective = false }
            if reverseTable.updateValue(key, forKey: value) != nil { injective = false }
        }
        let table = forwardTable, back = reverseTable
        let keysAreText = parameters["table"] != nil
        let forward: @Sendable (JSON) throws -> JSON = { value throws in
            let key: JSON = keysAreText && value.stringValue == nil ? .string(value.description) : value
            if let found = table[key] ?? fallback { return found }
            throw BindingError.transformFailed(
                transform: "lookup", reason: "the value (\(value.typeName)) is not in the table and there is no default")
        }
        let reverse: @Sendable (JSON) throws -> JSON = { value throws in
            if let found = back[value] { return found }
            throw BindingError.transformFailed(transform: "lookup", reason: "the value (\(value.typeName)) is not a value of the table")
        }
        return Transform(name: "lookup", samples: pairs.map(\.0), forward: forward, reverse: injective ? reverse : nil)
    }
}
