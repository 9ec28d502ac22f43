/// One granular change to a model, as observers and the SSE feed see it.
///
/// For `set` and `remove` of an object member, `path` is the member. For array operations (`insert`,
/// `remove` of an element, `replace`, `move`) `path` is the array and `index`/`from`/`to` say where.
/// Replacing a whole model is a `set` at the root; dropping a model is a `remove` at the root.
public struct Change: Sendable, Equatable {
    /// The change vocabulary shared by Swift, the wire and JavaScript.
    public enum Kind: String, Sendable {
        /// A value was set at `path` (created or replaced an object member, or the whole model).
        case set
        /// `value` was inserted into the array at `path` at `index`.
        case insert
        /// The object member at `path` was removed, or the array element at `index` of the array at `path`.
        case remove
        /// The array element at `index` of the array at `path` was replaced by `value`.
        case replace
        /// The array element at `from` of the array at `path` moved to `to` (an index in the result).
        case move
    }

    /// What happened.
    public var kind: Kind
    /// For an insert: whether the element became the array's last when it was committed (an append).
    /// Observers run after the store's lock is released, when later commits may have added rows, so
    /// the index alone no longer says so then. Not part of equality: it is how, not what, it changed.
    package var atEnd = false  // beside `kind`: it takes no room of its own
    /// The member for `set`/`remove` of a member; the array for array operations.
    public var path: Path
    /// The new value for `set`, `insert` and `replace`.
    public var value: JSON?
    /// The element index for `insert`, `remove` and `replace` of an array element.
    public var index: Int?
    /// The original index of the moved element for `move`.
    public var from: Int?
    /// The final index of the moved element for `move`.
    public var to: Int?
    /// The element's `"id"` member when the array element involved is an object with one.
    public var key: JSON?

    /// A change with every field given; unused fields stay `nil`.
    public init(
        kind: Kind, path: Path, value: JSON? = nil, index: Int? = nil, from: Int? = nil, to: Int? = nil,
        key: JSON? = nil
    ) {
        self.kind = kind
        self.path = path
        self.value = value
        self.index = index
        self.from = from
        self.to = to
        self.key = key
    }

    /// Equal when every public field is: ``atEnd`` is not compared.
    public static func == (lhs: Change, rhs: Change) -> Bool {
        lhs.kind == rhs.kind && lhs.path == rhs.path && lhs.value == rhs.value && lhs.index == rhs.index
            && lhs.from == rhs.from && lhs.to == rhs.to && lhs.key == rhs.key
    }

    /// The `"id"` member of an array element that is an object, used as `key`.
    package static func key(of element: JSON) -> JSON? {
        if case .object(let members) = element { members["id"] } else { nil }
    }
}

/// Everything one write did to one model: the unit of the store-wide feed (one SSE event).
public struct Commit: Sendable {
    /// What the commit carries.
    public enum Kind: Sendable {
        /// Granular changes, in the order they were made.
        case changes([Change])
        /// The model was created or replaced as a whole by `put`; this is its new value.
        case snapshot(JSON)
        /// The model was deleted.
        case drop
    }

    /// Store-wide, strictly increasing: the SSE event id.
    public var sequence: UInt64
    /// The model's name.
    public var model: String
    /// The model's revision after this commit.
    public var revision: UInt64
    /// What changed.
    public var kind: Kind
    /// How deep in a chain of binding writes it was made (0: not by a binding; see `ChangeStamp.depth`).
    /// Bindings read it for their loop guard.
    package var depth = 0
    /// What the write that made it asked the log to keep with it (see ``Store/withCommitTag(_:_:)``);
    /// nil for most commits.
    package var tag: String?
    /// How many commits after this one the same write made (a write to several models, see
    /// ``Store/write(_:)``): their events share the last one's id (``eventID``). 0 for most commits.
    package var unitTail = 0
    /// When the write that made it committed, in milliseconds since 1970 (0: not recorded). Stamped as
    /// it enters a commit log, kept in its record, so every node of a cluster sees the same time.
    package var time: Int64 = 0
    /// Who made it and through which route (set by the server's router, see `Store.commitOrigin`);
    /// nil when not said. Store observers (`observeAll`) get it too, with or without a log: the client
    /// tells the commits its mirror applied from the ones the application made.
    package var origin: CommitOrigin?
    /// Its record (`encodedRecord()`) as the commit log wrote it, handed on with the durable batch so
    /// that the history does not encode it again; nil elsewhere.
    package var record: [UInt8]?
    /// Its place among every commit the store made (`StoreState.order(of:)`), as store observers get
    /// it; bindings compare it, since a rollback hands sequence numbers out again.
    package var order: UInt64 = 0

    /// The id its event goes out with: the sequence of the last commit of the write that made it, so
    /// that a write to several models is one event id (and one group of events on a stream).
    package var eventID: UInt64 { sequence + UInt64(unitTail) }

    /// A commit with every field given.
    public init(sequence: UInt64, model: String, revision: UInt64, kind: Kind) {
        self.sequence = sequence
        self.model = model
        self.revision = revision
        self.kind = kind
    }

    /// A commit made `depth` deep in a chain of binding writes.
    init(sequence: UInt64, model: String, revision: UInt64, kind: Kind, depth: Int) {
        self.init(sequence: sequence, model: model, revision: revision, kind: kind)
        self.depth = depth
    }
}

/// Who made a commit and how, as the commit log records it for audit: opaque text the embedding
/// application chooses (the server writes `token:NAME`, `jwt:SUB`, … and `PUT /models/sensor`).
package struct CommitOrigin: Sendable, Equatable {
    /// Who wrote: the credential's name, or an address, or nil.
    package var actor: String?
    /// Through what: the server's route (method and path).
    package var route: String?
    /// Whether a binding carried it: the commit is in another model than the write's route names, or
    /// the write named none (``Commit/depth`` > 0 when it was made).
    package var carried = false

    package init(actor: String?, route: String?, carried: Bool = false) {
        self.actor = actor
        self.route = route
        self.carried = carried
    }
}

/// What a write did.
public struct WriteResult: Sendable, Equatable {
    /// The commit's sequence number; for a write that changed nothing, the store's last sequence.
    public var sequence: UInt64
    /// The model's revision after the write.
    public var revision: UInt64
    /// The index the element landed at, for appends.
    public var index: Int?
    /// `false` when the write changed nothing (an equal value was written).
    public var changed: Bool
    /// The commit's order (`StoreState.order(of:)`) for the bindings, when it changed something; not
    /// part of what the write answered, so not compared.
    package var order: UInt64 = 0

    /// Whether two results answer the same: sequence, revision, index and whether it changed.
    public static func == (lhs: WriteResult, rhs: WriteResult) -> Bool {
        lhs.sequence == rhs.sequence && lhs.revision == rhs.revision && lhs.index == rhs.index && lhs.changed == rhs.changed
    }

    /// A result with every field given.
    public init(sequence: UInt64, revision: UInt64, index: Int? = nil, changed: Bool) {
        self.sequence = sequence
        self.revision = revision
        self.index = index
        self.changed = changed
    }
}

/// A model's value at one revision.
public struct ModelSnapshot: Sendable {
    /// The model's name.
    public var name: String
    /// The model's revision when the snapshot was taken.
    public var revision: UInt64
    /// The whole document (an object).
    public var value: JSON
    /// The document's size as the store counts it for its limits, when known: a store restored from
    /// a checkpoint that kept it does not measure the document again.
    package var countedSize: Int?

    /// A snapshot with every field given.
    public init(name: String, revision: UInt64, value: JSON) {
        self.name = name
        self.revision = revision
        self.value = value
    }

    /// A snapshot with its counted size.
    package init(name: String, revision: UInt64, value: JSON, countedSize: Int?) {
        self.init(name: name, revision: revision, value: value)
        self.countedSize = countedSize
    }
}
