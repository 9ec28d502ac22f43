extension Store {
    /// Sets `value` at `path`: creates or replaces an object member, replaces an array element, or appends
    /// when the last component is `-` or the array's count. An equal value changes nothing.
    @discardableResult
    public func set(_ value: JSON, at path: Path, in model: String, ifRevision: UInt64? = nil) throws(StoreError)
        -> WriteResult
    {
        try commitEdit(model, ifRevision: ifRevision) { (document) throws(StoreError) -> Change? in
            switch document.replaceMember(value, at: path) {
            case .replaced: return Change(kind: .set, path: path, value: value)
            case .unchanged: return nil
            case .notApplicable: return try document.applySet(value, at: path)?.change
            }
        }
    }

    /// Removes the object member or array element at `path`.
    @discardableResult
    public func remove(at path: Path, in model: String, ifRevision: UInt64? = nil) throws(StoreError) -> WriteResult {
        try commitEdit(model, ifRevision: ifRevision) { (document) throws(StoreError) -> Change? in
            try document.applyRemove(at: path).change
        }
    }

    /// Inserts `value` at `index` (`0...count`) of the array at `array`.
    @discardableResult
    public func insert(_ value: JSON, at index: Int, in array: Path, of model: String, ifRevision: UInt64? = nil)
        throws(StoreError) -> WriteResult
    {
        try commitEdit(model, ifRevision: ifRevision) { (document) throws(StoreError) -> Change? in
            try document.applyInsert(value, at: index, in: array).change
        }
    }

    /// Appends `value` to the array at `array`; the result's `index` says where it landed.
    @discardableResult
    public func append(_ value: JSON, to array: Path, in model: String, ifRevision: UInt64? = nil) throws(StoreError)
        -> WriteResult
    {
        try commitEdit(model, ifRevision: ifRevision) { (document) throws(StoreError) -> Change? in
            try document.applyInsert(value, at: nil, in: array).change
        }
    }

    /// Replaces the element at `index` of the array at `array`. An equal value changes nothing.
    @discardableResult
    public func replace(at index: Int, in array: Path, of model: String, with value: JSON, ifRevision: UInt64? = nil)
        throws(StoreError) -> WriteResult
    {
        try commitEdit(model, ifRevision: ifRevision) { (document) throws(StoreError) -> Change? in
            try document.applyReplace(at: index, in: array, with: value)?.change
        }
    }

    /// Moves the element at `from` of the array at `array` so that it ends up at `to`.
    @discardableResult
    public func move(from: Int, to: Int, in array: Path, of model: String, ifRevision: UInt64? = nil)
        throws(StoreError) -> WriteResult
    {
        try commitEdit(model, ifRevision: ifRevision) { (document) throws(StoreError) -> Change? in
            try document.applyMove(from: from, to: to, in: array)?.change
        }
    }
}
