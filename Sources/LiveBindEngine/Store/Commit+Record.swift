/// A commit as a commit log stores it: what it did, as compact UTF-8 JSON, beside the sequence, model
/// and revision the log keeps in columns of their own.
///
/// `{"changes":[{"op":"set","path":["a","b"],"value":1}, …]}`, `{"snapshot":{…}}` or `{"drop":true}`,
/// with `"unitTail":n` after it when n more commits of the same write follow (see `Commit.unitTail`),
/// `"at":ms` when it was made (`Commit.time`) and `"by":{"actor","route"}` who made it (`Commit.origin`; `"carried":true` when a binding carried it).
/// A change names only the fields it has: `value`, `index`, `from`, `to`, `key`. The path is its list of components, so that no escaping rule is involved.
extension Commit {
    /// This commit's record, written straight into one buffer.
    package func encodedRecord() -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        switch kind {
        case .changes(let changes):
            writer.append(#"{"changes":["#)
            for (position, change) in changes.enumerated() {
                if position > 0 { writer.append(UInt8(ascii: ",")) }
                change.writeRecord(to: &writer)
            }
            writer.append("]")
        case .snapshot(let value):
            writer.append(#"{"snapshot":"#)
            value.write(to: &writer)
        case .drop:
            writer.append(#"{"drop":true"#)
        }
        if unitTail > 0 {
            writer.append(#","unitTail":"#)
            writer.writeInteger(unitTail)
        }
        if time > 0 {
            writer.append(#","at":"#)
            writer.writeInteger(Int(time))
        }
        if let origin {
            writer.append(#","by":{"#)
            if let actor = origin.actor {
                writer.append(#""actor":"#)
                writer.writeString(actor)
            }
            if let route = origin.route {
                if origin.actor != nil { writer.append(UInt8(ascii: ",")) }
                writer.append(#""route":"#)
                writer.writeString(route)
            }
            if origin.carried {
                if origin.actor != nil || origin.route != nil { writer.append(UInt8(ascii: ",")) }
                writer.append(#""carried":true"#)
            }
            writer.append(UInt8(ascii: "}"))
        }
        writer.append(UInt8(ascii: "}"))
        return writer.bytes()
    }

    /// The commit `record` describes, with the fields the log kept beside it. Throws
    /// ``CommitRecordError`` when the bytes are not a record this code writes.
    package init(record bytes: some Collection<UInt8>, sequence: UInt64, model: String, revision: UInt64)
        throws(CommitRecordError)
    {
        let record: JSON
        do {
            // Two levels of record around a document that may be `StoreLimits.depthCeiling` deep.
            record = try JSON(parsing: bytes, maxDepth: StoreLimits.depthCeiling + 4)
        } catch {
            throw CommitRecordError(sequence: sequence, reason: error.description)
        }
        let kind: Kind
        if let changes = record["changes"]?.arrayValue {
            var decoded: [Change] = []
            decoded.reserveCapacity(changes.count)
            for change in changes {
                guard let made = Change(record: change) else {
                    throw CommitRecordError(sequence: sequence, reason: "a change it holds is not one")
                }
                decoded.append(made)
            }
            kind = .changes(decoded)
        } else if let value = record["snapshot"], case .object = value {
            kind = .snapshot(value)
        } else if record["drop"] == .bool(true) {
            kind = .drop
        } else {
            throw CommitRecordError(sequence: sequence, reason: "it holds no changes, snapshot or drop")
        }
        self.init(sequence: sequence, model: model, revision: revision, kind: kind)
        if let tail = record["unitTail"] {
            guard case .int(let count) = tail, count > 0, count < Int(UInt32.max) else {
                throw CommitRecordError(sequence: sequence, reason: "its unitTail is not a positive count")
            }
            unitTail = count
        }
        if let at = record["at"] {
            guard case .int(let milliseconds) = at, milliseconds > 0 else {
                throw CommitRecordError(sequence: sequence, reason: "its time is not a positive count of milliseconds")
            }
            time = Int64(milliseconds)
        }
        if let by = record["by"] {
            guard case .object = by else { throw CommitRecordError(sequence: sequence, reason: "its origin is not an object") }
            origin = CommitOrigin(
                actor: by["actor"]?.stringValue, route: by["route"]?.stringValue,
                carried: by["carried"] == .bool(true))
        }
    }
}

/// A commit log holds a record this code cannot read.
package struct CommitRecordError: Error, CustomStringConvertible {
    /// The sequence of the commit whose record it is.
    let sequence: UInt64
    let reason: String

    package init(sequence: UInt64, reason: String) {
        self.sequence = sequence
        self.reason = reason
    }

    package var description: String { "the record of commit \(sequence) cannot be read: \(reason)" }
}

extension Change {
    /// Writes this change as a record's element, straight into the writer: a durable write encodes
    /// its record on the log's thread, and building it as JSON values first (members, path array,
    /// strings) would be allocations of their own.
    func writeRecord(to writer: inout JSONWriter) {
        writer.append(#"{"op":"#)
        writer.writeString(kind.rawValue)
        writer.append(#","path":["#)
        for (position, component) in path.components.enumerated() {
            if position > 0 { writer.append(UInt8(ascii: ",")) }
            writer.writeString(component)
        }
        writer.append(UInt8(ascii: "]"))
        if let value {
            writer.append(#","value":"#)
            value.write(to: &writer)
        }
        if let index {
            writer.append(#","index":"#)
            writer.writeInteger(index)
        }
        if let from {
            writer.append(#","from":"#)
            writer.writeInteger(from)
        }
        if let to {
            writer.append(#","to":"#)
            writer.writeInteger(to)
        }
        if let key {
            writer.append(#","key":"#)
            key.write(to: &writer)
        }
        writer.append(UInt8(ascii: "}"))
    }

    /// The change a record's element describes, or `nil` when it is not one.
    init?(record: JSON) {
        guard let kind = record["op"]?.stringValue.flatMap(Kind.init(rawValue:)),
            let components = record["path"]?.arrayValue
        else { return nil }
        var path: [String] = []
        path.reserveCapacity(components.count)
        for component in components {
            guard let name = component.stringValue else { return nil }
            path.append(name)
        }
        func integer(_ name: String) -> Int?? {
            guard let member = record[name] else { return .some(nil) }
            guard case .int(let value) = member else { return nil }
            return .some(value)
        }
        guard let index = integer("index"), let from = integer("from"), let to = integer("to") else { return nil }
        self.init(
            kind: kind, path: Path(path), value: record["value"], index: index, from: from, to: to,
            key: record["key"])
    }
}
