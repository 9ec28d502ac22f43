extension ModelEditor {
    /// Reverses every edit made so far, newest first, and forgets the changes.
    mutating func rollback() {
        while let step = undoLog.popLast() { document.undo(step) }
        changes.removeAll(keepingCapacity: true)
        appendedIndex = nil
        sizeDelta = 0
    }
}
