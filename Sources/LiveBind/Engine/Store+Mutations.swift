extension Store {
    /// Sets `value` at `path`: creates or replaces an object member, replaces an array element, or appends
    /// when the last component is `-` or the array's count. An equal value changes nothing.
    @discardableResult
    public func set(_ value: JSON, at path: Path, in model: String, ifRevision: UInt64? = nil) throws(StoreError)
        -> WriteResult
    {
        try commit(model, ifRevision: ifRevision) { (editor) throws(StoreError) in try editor.set(value, at: path) }
    }

    /// Removes the object member or array element at `path`.
    @discardableResult
    public func remove(at path: Path, in model: String, ifRevision: UInt64? = nil) throws(StoreError) -> WriteResult {
        try commit(model, ifRevision: ifRevision) { (editor) throws(StoreError) in try editor.remove(at: path) }
    }

    /// Inserts `value` at `index` (`0...count`) of the array at `array`.
    @discardableResult
    public func insert(_ value: JSON, at index: Int, in array: Path, of model: String, ifRevision: UInt64? = nil)
        throws(StoreError) -> WriteResult
    {
        try commit(model, ifRevision: ifRevision) { (editor) throws(StoreError) in
            try editor.insert(value, at: index, in: array)
        }
    }

    /// Appends `value` to the array at `array`; the result's `index` says where it landed.
    @discardableResult
    public func append(_ value: JSON, to array: Path, in model: String, ifRevision: UInt64? = nil) throws(StoreError)
        -> WriteResult
    {
        try commit(model, ifRevision: ifRevision) { (editor) throws(StoreError) in
            try editor.append(value, to: array)
        }
    }

    /// Replaces the element at `index` of the array at `array`. An equal value changes nothing.
    @discardableResult
    public func replace(at index: Int, in array: Path, of model: String, with value: JSON, ifRevision: UInt64? = nil)
        throws(StoreError) -> WriteResult
    {
        try commit(model, ifRevision: ifRevision) { (editor) throws(StoreError) in
            try editor.replace(at: index, in: array, with: value)
        }
    }

    /// Moves the element at `from` of the array at `array` so that it ends up at `to`.
    @discardableResult
    public func move(from: Int, to: Int, in array: Path, of model: String, ifRevision: UInt64? = nil)
        throws(StoreError) -> WriteResult
    {
        try commit(model, ifRevision: ifRevision) { (editor) throws(StoreError) in
            try editor.move(from: from, to: to, in: array)
        }
    }
}
