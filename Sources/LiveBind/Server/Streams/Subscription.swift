import LiveBindEngine
internal import LiveBindHTTP
/// One location a stream subscribes to with `?sub=`: a model, a JSON Pointer into it, and perhaps a
/// window of rows when the location is an array. Guarded by the event hub's lock once registered.
///
/// The written form is `model[/pointer][;first=N|;last=N|;offset=K;limit=N]`: `sensor/readings;last=50`;
/// with `;where=…` or `;order=…` it is a view of the array (``ViewQuery``):
/// `orders/items;where=status:eq:open;order=-time;limit=50`.
struct Subscription: Sendable, Equatable {
    /// The model the location is in.
    let model: String
    /// The location inside the model (the root for a whole model).
    let path: Path
    /// The rows a window shows; nil for a plain subscription (every change at or below the location).
    var window: Window?
    /// The view of the array at the location, when it is one: its rows are those the query arranges,
    /// shared with every stream that subscribes to the same view (`SharedView`).
    var view: ViewQuery?
    /// The view's parameters as the client wrote them (`where=…;order=…;limit=…`): its events carry
    /// them as `"view"`, so that a client tells its views of one array apart.
    var viewText: String?
    /// The window as the stream last reported it (`"window"` of its latest event).
    var reported = Window.Position(offset: 0, length: 0)
    /// The window as the changes applied so far left it (equal to `reported` between commits).
    var current = Window.Position(offset: 0, length: 0)
    /// Counts the snapshots taken of the location: one still being encoded when a newer one was taken
    /// (a window moved again, the stream started over) is dropped, not sent.
    var snapshotGeneration = 0
    /// Set while the location is a view being arranged outside the hub's lock (`SharedView.isStale`):
    /// its stream is held back (`Subscriber.pendingSnapshots`) until the view's snapshot is taken.
    var awaitsArrangement = false

    /// The `sub` value this subscription answers to in `PATCH /events/{stream}`: model and pointer
    /// (and a view's parameters).
    var name: String { model + path.pointer + (viewText.map { ";" + $0 } ?? "") }

    /// Parses one `sub` value; `maxWindow` bounds a window's rows, `viewLimits` a view's query. Throws
    /// 400 for a malformed value and 422 for a window larger than `maxWindow` or a query past `viewLimits`.
    static func parse(
        _ text: String, maxWindow: Int,
        viewLimits: ViewQuery.Limits = ViewQuery.Limits()
    ) throws(RequestError) -> Subscription {
        var rest = Substring(text)
        var parameters: [(name: String, value: Int)] = []
        var viewParts: [String: String] = [:]
        var viewStart: Substring.Index?
        // Parameters are taken from the end only while they are `;name=value` with a known name,
        // so a member name holding `;` still works as long as it does not look like one.
        while let semicolon = rest.lastIndex(of: ";") {
            let parameter = rest[rest.index(after: semicolon)...]
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, Window.parameterNames.contains(String(parts[0])) || Self.viewNames.contains(String(parts[0]))
            else { break }
            guard !parameters.contains(where: { $0.name == parts[0] }), viewParts[String(parts[0])] == nil else {
                throw .invalidSubscription(text, "\(parts[0]) is given twice")
            }
            viewStart = rest.index(after: semicolon)
            rest = rest[..<semicolon]
            if Self.viewNames.contains(String(parts[0])) {
                viewParts[String(parts[0])] = String(parts[1])
                continue
            }
            guard parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(parts[1]) else {
                throw .invalidSubscription(text, "\(parts[0]) must be a whole number of rows, 0 or more")
            }
            parameters.insert((String(parts[0]), value), at: 0)
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let model = String(rest[..<slash])
        guard Store.isValidModelName(model) else {
            throw .invalidSubscription(text, "'\(model)' is not a model name (1–128 of A-Z a-z 0-9 _ -)")
        }
        let path: Path
        do {
            path = try Path(pointer: String(rest[slash...]))
        } catch {
            throw .invalidSubscription(text, "the pointer after the model is not a JSON Pointer: \(error)")
        }
        guard !viewParts.isEmpty, let viewStart else {
            let window = try Window(parameters: parameters, subscription: text, maxWindow: maxWindow)
            return Subscription(model: model, path: path, window: window)
        }
        let given = Dictionary(uniqueKeysWithValues: parameters.map { ($0.name, $0.value) })
        guard given["first"] == nil, given["last"] == nil else {
            throw .invalidSubscription(text, "a view (where=, order=) takes offset= and limit=, not first= or last=")
        }
        // A view shows at most --max-window rows: its limit, or that many.
        let limit = given["limit"] ?? maxWindow
        try Window(anchor: .start(offset: 0), limit: limit).check(subscription: text, maxWindow: maxWindow)
        let query: ViewQuery
        do {
            query = try ViewQuery(
                where: viewParts["where"], order: viewParts["order"], offset: given["offset"] ?? 0, limit: limit,
                limits: viewLimits)
        } catch {
            if let bound = error.exceeded {
                throw .viewQueryTooLarge(text, reason: error.description, setting: bound.setting, limit: bound.limit)
            }
            throw .invalidSubscription(text, error.description)
        }
        var location = Subscription(model: model, path: path)
        location.view = query
        location.viewText = String(text[viewStart...])
        return location
    }

    /// The parameters that make a subscription a view.
    static let viewNames: Set<String> = ["where", "order"]
}

/// The rows of an array a window subscription shows: from a fixed offset, or the last rows.
struct Window: Sendable, Equatable {
    /// Where a window is anchored.
    enum Anchor: Sendable, Equatable {
        /// At an absolute offset from the array's start (`first=`, `offset=`): the rows `offset..<offset+limit`.
        case start(offset: Int)
        /// At the array's end (`last=`): the last `limit` rows, however the array grows.
        case end
    }

    /// Where the window is, as every window event reports it: `offset` is the absolute index of the
    /// window's first row, `length` the array's length.
    struct Position: Sendable, Hashable {
        var offset: Int
        var length: Int
    }

    var anchor: Anchor
    /// Most rows in the window.
    var limit: Int

    /// The query parameters a window is made of.
    static let parameterNames: Set<String> = ["first", "last", "offset", "limit"]

    /// The absolute indexes of the rows in the window of an array of `length` rows.
    func rows(length: Int) -> Range<Int> {
        switch anchor {
        case .start(let offset):
            // Saturating: an offset near `Int.max` is a window past any array, not an overflow.
            offset..<max(offset, min(length, offset > Int.max - limit ? Int.max : offset + limit))
        case .end: max(0, length - limit)..<length
        }
    }

    /// The window the parameters describe (nil when there are none): `first=N`, `last=N`, or
    /// `offset=K` with `limit=N` (`limit=N` alone is `first=N`).
    init?(parameters: [(name: String, value: Int)], subscription: String, maxWindow: Int) throws(RequestError) {
        guard !parameters.isEmpty else { return nil }
        let given = Dictionary(uniqueKeysWithValues: parameters.map { ($0.name, $0.value) })
        switch (given["first"], given["last"], given["offset"], given["limit"]) {
        case (let first?, nil, nil, nil): self.init(anchor: .start(offset: 0), limit: first)
        case (nil, let last?, nil, nil): self.init(anchor: .end, limit: last)
        case (nil, nil, let offset, let limit?): self.init(anchor: .start(offset: offset ?? 0), limit: limit)
        default:
            throw .invalidSubscription(subscription, "a window is first=N, last=N, or offset=K with limit=N")
        }
        try check(subscription: subscription, maxWindow: maxWindow)
    }

    init(anchor: Anchor, limit: Int) {
        self.anchor = anchor
        self.limit = limit
    }

    /// Throws unless the window has between 1 and `maxWindow` rows.
    func check(subscription: String, maxWindow: Int) throws(RequestError) {
        if limit < 1 { throw .invalidSubscription(subscription, "a window has at least one row") }
        if limit > maxWindow { throw .windowTooLarge(subscription, rows: limit, limit: maxWindow) }
    }
}
