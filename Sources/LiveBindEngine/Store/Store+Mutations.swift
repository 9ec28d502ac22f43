extension Store {
    /// Sets `value` at `path`: creates or replaces an object member, replaces an array element, or appends
    /// when the last component is `-` or the array's count. An equal value changes nothing.
    @discardableResult
    public func set(_ value: JSON, at path: Path, in model: String, ifRevision: UInt64? = nil) throws(StoreError)
        -> WriteResult
    {
        try set(value, at: path, in: model, ifRevision: ifRevision, depth: 0)
    }

    /// `set`, made by a binding `depth` writes deep (see `ChangeStamp.depth`); `inDelivery` when the
    /// binding was called by the delivering thread (see `claimNestedDelivery`).
    @inline(__always)
    func set(_ value: JSON, at path: Path, in model: String, ifRevision: UInt64?, depth: Int, inDelivery: Bool = false)
        throws(StoreError) -> WriteResult
    {
        try commitEdit(model, ifRevision: ifRevision, depth: depth, inDelivery: inDelivery) {
            (document, context, sizeDelta) throws(StoreError) -> Change? in
            // Without rules the value is used as given: a copy for nothing cost about 100 of a set's
            // 1,200 instructions.
            func apply(_ value: JSON) throws(StoreError) -> Change? {
                let size = try context.measure(value, at: path.components.count)
                switch document.replaceMember(value, size: size, room: context.room, at: path) {
                case .replaced(let delta):
                    sizeDelta = delta
                    return Change(kind: .set, path: path, value: value)
                case .tooLarge(let delta):
                    throw context.refusal(growingBy: delta, limits: limits)
                case .unchanged:
                    return nil
                case .notApplicable:
                    return try context.admit(
                        document.applySet(value, at: path), adding: size, to: &document,
                        sizeDelta: &sizeDelta, limits: limits)
                }
            }
            guard let rules = context.rules else { return try apply(value) }
            return try apply(try rules.validated(value, at: path, in: document))
        }
    }

    /// Removes the object member or array element at `path`.
    @discardableResult
    public func remove(at path: Path, in model: String, ifRevision: UInt64? = nil) throws(StoreError) -> WriteResult {
        try remove(at: path, in: model, ifRevision: ifRevision, depth: 0)
    }

    /// `remove`, made by a binding `depth` writes deep (see `ChangeStamp.depth`).
    @inline(__always)
    func remove(at path: Path, in model: String, ifRevision: UInt64?, depth: Int) throws(StoreError) -> WriteResult {
        try commitEdit(model, ifRevision: ifRevision, depth: depth) { (document, context, sizeDelta) throws(StoreError) -> Change? in
            try context.admit(document.applyRemove(at: path), adding: 0, to: &document, sizeDelta: &sizeDelta, limits: limits)
        }
    }

    /// Inserts `value` at `index` (`0...count`) of the array at `array`.
    @discardableResult
    public func insert(_ value: JSON, at index: Int, in array: Path, of model: String, ifRevision: UInt64? = nil)
        throws(StoreError) -> WriteResult
    {
        try insert(value, at: index, in: array, of: model, ifRevision: ifRevision, depth: 0)
    }

    /// `insert`, made by a binding `depth` writes deep (see `ChangeStamp.depth`).
    @inline(__always)
    func insert(_ value: JSON, at index: Int, in array: Path, of model: String, ifRevision: UInt64?, depth: Int)
        throws(StoreError) -> WriteResult
    {
        try commitEdit(model, ifRevision: ifRevision, depth: depth) { (document, context, sizeDelta) throws(StoreError) -> Change? in
            func apply(_ value: JSON) throws(StoreError) -> Change? {
                let size = try context.measure(value, at: array.components.count + 1)
                return try context.admit(
                    document.applyInsert(value, at: index, in: array), adding: size, to: &document,
                    sizeDelta: &sizeDelta, limits: limits)
            }
            guard let rules = context.rules else { return try apply(value) }
            return try apply(try rules.validated(value, at: array.appending(String(index)), in: document))
        }
    }

    /// Appends `value` to the array at `array`; the result's `index` says where it landed.
    @discardableResult
    public func append(_ value: JSON, to array: Path, in model: String, ifRevision: UInt64? = nil) throws(StoreError)
        -> WriteResult
    {
        try commitEdit(model, ifRevision: ifRevision) { (document, context, sizeDelta) throws(StoreError) -> Change? in
            func apply(_ value: JSON) throws(StoreError) -> Change? {
                let size = try context.measure(value, at: array.components.count + 1)
                return try context.admit(
                    document.applyInsert(value, at: nil, in: array), adding: size, to: &document,
                    sizeDelta: &sizeDelta, limits: limits)
            }
            guard let rules = context.rules, let count = try document.value(at: array).arrayValue?.count else {
                return try apply(value)
            }
            return try apply(try rules.validated(value, at: array.appending(String(count)), in: document))
        }
    }

    /// Replaces the element at `index` of the array at `array`. An equal value changes nothing.
    @discardableResult
    public func replace(at index: Int, in array: Path, of model: String, with value: JSON, ifRevision: UInt64? = nil)
        throws(StoreError) -> WriteResult
    {
        try replace(at: index, in: array, of: model, with: value, ifRevision: ifRevision, depth: 0)
    }

    /// `replace`, made by a binding `depth` writes deep (see `ChangeStamp.depth`).
    @inline(__always)
    func replace(at index: Int, in array: Path, of model: String, with value: JSON, ifRevision: UInt64?, depth: Int)
        throws(StoreError) -> WriteResult
    {
        try commitEdit(model, ifRevision: ifRevision, depth: depth) { (document, context, sizeDelta) throws(StoreError) -> Change? in
            func apply(_ value: JSON) throws(StoreError) -> Change? {
                let size = try context.measure(value, at: array.components.count + 1)
                return try context.admit(
                    document.applyReplace(at: index, in: array, with: value), adding: size,
                    to: &document, sizeDelta: &sizeDelta, limits: limits)
            }
            guard let rules = context.rules else { return try apply(value) }
            return try apply(try rules.validated(value, at: array.appending(String(index)), in: document))
        }
    }

    /// Moves the element at `from` of the array at `array` so that it ends up at `to`.
    @discardableResult
    public func move(from: Int, to: Int, in array: Path, of model: String, ifRevision: UInt64? = nil)
        throws(StoreError) -> WriteResult
    {
        try move(from: from, to: to, in: array, of: model, ifRevision: ifRevision, depth: 0)
    }

    /// `move`, made by a binding `depth` writes deep (see `ChangeStamp.depth`).
    @inline(__always)
    func move(from: Int, to: Int, in array: Path, of model: String, ifRevision: UInt64?, depth: Int)
        throws(StoreError) -> WriteResult
    {
        try commitEdit(model, ifRevision: ifRevision, depth: depth) { (document, context, sizeDelta) throws(StoreError) -> Change? in
            try context.admit(
                document.applyMove(from: from, to: to, in: array), adding: 0, to: &document, sizeDelta: &sizeDelta, limits: limits)
        }
    }
}
