extension ModelEditor {
    /// Applies an RFC 7386 JSON Merge Patch to the value at `path`, as granular changes: a member set to
    /// `null` is removed, nested objects are merged member by member, anything else replaces the target
    /// (with `null` members left out). A missing member at `path` is treated as `null` and created.
    public mutating func mergePatch(_ patch: JSON, at path: Path = .root) throws(StoreError) {
        guard case .object(let patchMembers) = patch else {
            try set(patch, at: path)
            return
        }
        // Decide every step while the target is borrowed, then apply them without holding it, so that
        // the edits below mutate the document in place.
        let steps: [MergeStep]? = try {
            () throws(StoreError) -> [MergeStep]? in
            let target: JSON
            do throws(StoreError) {
                target = try document.value(at: path)
            } catch .pathNotFound(let missing) where missing == path {
                return nil
            }
            guard case .object(let targetMembers) = target else { return nil }
            return patchMembers.compactMap { key, value -> MergeStep? in
                let existing = targetMembers[key]
                if value == .null { return existing == nil ? nil : .remove(key) }
                if case .object = value, case .object? = existing { return .merge(key, value) }
                return .set(key, value)
            }
        }()
        guard let steps else {
            try set(patch.removingNullMembers(), at: path)
            return
        }
        for step in steps {
            switch step {
            case .remove(let key): try remove(at: path.appending(key))
            case .merge(let key, let value): try mergePatch(value, at: path.appending(key))
            case .set(let key, let value): try set(value.removingNullMembers(), at: path.appending(key))
            }
        }
    }

    private enum MergeStep {
        case remove(String)
        case merge(String, JSON)
        case set(String, JSON)
    }
}
