extension StateDatabase {
    /// Everything a restarted server starts from.
    struct Contents: Sendable {
        /// The models as last committed, with their revisions.
        var models: [ModelSnapshot] = []
        /// The sequence of the last committed write: the next event id is one more.
        var lastSequence: UInt64 = 0
    }

    /// Reads the models and the sequence back.
    func load() throws(StateDatabaseError) -> Contents {
        let path = directory + "/" + Self.fileName
        return try withConnection { (connection) throws(StateDatabaseError) -> Contents in
            var contents = Contents()
            do {
                let models = try connection.database.prepare("SELECT name, revision, document FROM models ORDER BY name")
                while try models.step() {
                    let name = models.text(0)
                    guard let value = try? JSON(parsing: models.bytes(2)), case .object = value else {
                        throw StateDatabaseError.notLiveBind(path: path, reason: "model '\(name)' does not hold a JSON object")
                    }
                    contents.models.append(ModelSnapshot(name: name, revision: UInt64(models.int64(1)), value: value))
                }
                let sequence = try connection.database.prepare("SELECT value FROM meta WHERE key = 'sequence'")
                if try sequence.step() { contents.lastSequence = UInt64(max(0, sequence.int64(0))) }
            } catch let error as StateDatabaseError {
                throw error
            } catch {
                throw StateDatabaseError.from(error, path: path)
            }
            return contents
        }
    }

    /// The retained event log, oldest first, as the event hub keeps it. Empty when it cannot be read
    /// (clients then get `resync`, never a wrong event).
    func recentEvents() -> [EventFrame] {
        withConnection { connection in
            var frames: [EventFrame] = []
            do {
                let events = try connection.database.prepare(
                    "SELECT sequence, model, frame FROM events ORDER BY sequence DESC LIMIT ?1")
                try events.bind(1, Int64(retainedEvents))
                while try events.step() {
                    frames.append(EventFrame(sequence: UInt64(events.int64(0)), model: events.text(1), isCommit: true,
                                             bytes: events.bytes(2)))
                }
            } catch {
                return []
            }
            return frames.reversed()
        }
    }
}
