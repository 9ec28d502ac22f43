extension Store {
    /// Applies an RFC 7386 JSON Merge Patch at `path` of `model` as one commit of granular changes.
    @discardableResult
    public func mergePatch(_ patch: JSON, at path: Path = .root, in model: String, ifRevision: UInt64? = nil)
        throws(StoreError) -> WriteResult
    {
        try write(model, ifRevision: ifRevision) { (editor) throws(StoreError) in
            try editor.mergePatch(patch, at: path)
        }
    }

    /// Applies an RFC 6902 JSON Patch to `model`, all-or-nothing, as one commit of granular changes.
    @discardableResult
    public func jsonPatch(_ operations: JSON, in model: String, ifRevision: UInt64? = nil) throws(StoreError)
        -> WriteResult
    {
        try write(model, ifRevision: ifRevision) { (editor) throws(StoreError) in
            try editor.jsonPatch(operations)
        }
    }
}
