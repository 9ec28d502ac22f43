import LiveBindEngine
public import LiveBindHTTP  // not internal: the entry points throw its RequestError, named below
/// Entry points for the grammar fuzz targets in `Fuzz/` (`@_spi(Fuzzing) import LiveBind`): what a client
/// writes that internal types read — `sub=` values and their windows, the `PATCH /events/{stream}` body,
/// `Last-Event-ID` and `If-Match` — reached without a socket, through the functions the routes call.
/// Binding entries, tokens files and `--config` definitions are read by public API
/// (`BindingSpec(json:)`, `AccessPolicy.Token.list(json:)`, `BindingSet(definition:registry:)`), which
/// the targets call directly. Not part of the public API.
@_spi(Fuzzing) public enum GrammarFuzzing {
    /// One `sub` value as `GET /events` reads it, in the terms of its written form.
    public struct Location: Sendable, Equatable {
        /// The model.
        public let model: String
        /// The JSON Pointer inside the model (`""` for the whole model).
        public let pointer: String
        /// The window's first row for a `first=` or `offset=` window; nil for `last=` and for no window.
        public let offset: Int?
        /// The window's most rows; nil for a plain location.
        public let limit: Int?
        let subscription: Subscription

        /// The canonical `sub` value for this location and window: `model/pointer;offset=K;limit=N`,
        /// `model/pointer;last=N`, or `model/pointer`.
        public var text: String {
            guard let limit else { return subscription.name }
            guard let offset else { return subscription.name + ";last=\(limit)" }
            return subscription.name + ";offset=\(offset);limit=\(limit)"
        }

        /// The absolute rows the window shows of an array of `length` rows; all of them for no window.
        public func rows(length: Int) -> Range<Int> {
            subscription.window?.rows(length: length) ?? 0..<length
        }
    }

    /// The shown rows of a view of `elements` by a full filter and stable sort, and how many match:
    /// what an `ArrangedArray` must hold.
    public static func arrangedByFullSort(_ elements: [JSON], _ query: ViewQuery) -> (rows: [JSON], matching: Int) {
        query.arrangedByFullSort(elements)
    }

    /// A point of the history as `from=`, `to=`, `at=` and `since=` read it: `(time, nil)` in milliseconds
    /// since 1970, `(nil, id)` for an event id; nil when the text names none.
    public static func historyPoint(_ text: String) -> (time: Int64?, event: UInt64?)? {
        switch try? HistoryEndpoint.point(text, parameter: "from") {
        case .time(let time): (time, nil)
        case .event(let id): (nil, id)
        case nil: nil
        }
    }

    /// Milliseconds in a duration as `step=` and `--history` read it, and its text written back.
    public static func historyDuration(_ text: String) -> (milliseconds: Int64, text: String)? {
        HistoryUnits.milliseconds(Substring(text)).map { ($0, HistoryUnits.text(milliseconds: $0)) }
    }

    /// A time as history answers write it (RFC 3339 in UTC), and read back.
    public static func historyTime(_ milliseconds: Int64) -> (text: String, read: Int64?) {
        let text = HistoryTime.text(milliseconds)
        return (text, HistoryTime.parse(text))
    }

    /// Whether `--history` takes `text`.
    public static func historyRetention(_ text: String) -> Bool { HistoryRetention(parsing: text) != nil }

    /// Applies `change` (as a stream's client does) to `value`.
    public static func replay(_ change: Change, onto value: inout JSON) throws(StoreError) {
        try value.replay(change)
    }

    /// Parses one `sub` value as `GET /events` does, with windows of at most `maxWindow` rows.
    public static func location(_ text: String, maxWindow: Int) throws(RequestError) -> Location {
        let subscription = try Subscription.parse(text, maxWindow: maxWindow)
        var offset: Int?
        if case .start(let start)? = subscription.window?.anchor { offset = start }
        return Location(
            model: subscription.model, pointer: subscription.path.pointer, offset: offset,
            limit: subscription.window?.limit, subscription: subscription)
    }

    /// The revision the model endpoints read from these `If-Match` fields: nil when there is none or `*`.
    public static func ifMatch(_ fields: [(name: String, value: String)]) throws(RequestError) -> UInt64? {
        try RequestBody.ifMatch(HTTPRequest(method: .put, path: "/models/m", headers: HTTPHeaders(fields: fields)))
    }

    /// An event hub over a store of its own whose every commit is published at once (as the server's
    /// feed does, without its thread), with the routes' `GET /events` and `PATCH /events/{stream}`.
    /// Use from one thread.
    public final class Streams: Sendable {
        /// The store the hub streams; write to it to publish.
        public let store: Store
        let hub: EventHub
        let feed: ObservationToken

        /// A hub retaining `retainedEvents` events, with at most `maxWindow` rows a window and
        /// `maxSubscriptions` `sub` values a stream, over an empty store whose first commit will be
        /// `startingSequence + 1` (the ids before it are another run's, as after a restart).
        public init(retainedEvents: Int, maxWindow: Int, maxSubscriptions: Int, startingSequence: UInt64 = 0) {
            store = Store(startingSequence: startingSequence)
            let hub = EventHub(
                store: store,
                settings: .init(
                    retainedEvents: retainedEvents, maxStreams: 8, maxSubscriptions: maxSubscriptions, maxWindow: maxWindow))
            self.hub = hub
            feed = store.observeAll { commit in hub.publish([EventEncoder.frame(for: commit)], commits: [commit]) }
        }

        /// Which commits the hub still holds: a `Last-Event-ID` from `droppedThrough` to `newest`
        /// resumes; below `runStart` it is from before the hub (another run).
        public var retained: (droppedThrough: UInt64, newest: UInt64, runStart: UInt64?) {
            hub.state.withLock { ($0.log.droppedThrough, $0.log.newestSequence, $0.log.runStart) }
        }

        /// A stream as `GET /events` opened it.
        public struct Opened: Sendable {
            let id: Int
            /// The id `PATCH /events/{stream}` takes, for a stream with `sub` values.
            public let streamID: String?
            /// The events the stream sends before any commit (`retry`, `stream`, `resync`, snapshots).
            public let preface: String
            /// The stream has sent (or covered by a snapshot) every commit up to this one.
            public let lastSequence: UInt64
            /// The sequences of the retained commits the stream reads next, in order.
            public let pending: [UInt64]
        }

        /// Opens `GET /events` with this query and these header fields, as the route does for a
        /// credential that reaches every model. Throws what the route throws.
        public func open(query: [(name: String, value: String)], headers: [(name: String, value: String)]) throws -> Opened {
            let request = HTTPRequest(method: .get, path: "/events", query: query, headers: HTTPHeaders(fields: headers))
            let response = try LiveBindServer.openStream(request, hub: hub, grant: .everything)
            guard case .stream(let body) = response.body, let stream = body as? EventStream else {
                preconditionFailure("GET /events answered without a stream")
            }
            return hub.state.withLock { state in
                let subscriber = state.subscribers[stream.id]!
                var pending: [UInt64] = []
                for position in max(subscriber.position, state.log.basePosition)..<state.log.endPosition {
                    let frame = state.log[position]
                    if frame.isCommit, frame.model.map(subscriber.models.wants) ?? true { pending.append(frame.sequence) }
                }
                return Opened(
                    id: stream.id, streamID: subscriber.streamID, preface: Self.text(subscriber.preface),
                    lastSequence: subscriber.lastSequence, pending: pending)
            }
        }

        /// `PATCH /events/{stream}` with this JSON body for `opened`'s stream, as the route does; returns
        /// the location events the stream holds now (the moved window's snapshot last).
        public func moveWindow(_ opened: Opened, body: [UInt8]) throws -> String {
            let request = HTTPRequest(
                method: .patch, path: "/events/\(opened.streamID ?? "")",
                headers: ["Content-Type": RequestBody.json], body: body)
            try LiveBindServer.moveWindow(request, stream: opened.streamID ?? "", hub: hub, reach: .everything)
            return held(opened)
        }

        /// The location events `opened`'s stream holds (made from commits and window moves since it opened).
        public func held(_ opened: Opened) -> String {
            hub.state.withLock { state in state.subscribers[opened.id].map { Self.text(Array($0.derived)) } ?? "" }
        }

        /// Ends the stream, as its response's end does.
        public func close(_ opened: Opened) {
            hub.close(opened.id)
        }

        private static func text(_ frames: [EventFrame]) -> String {
            String(decoding: frames.flatMap(\.bytes), as: UTF8.self)
        }
    }
}

/// What a request is refused with before the engine is asked (`LiveBindHTTP.RequestError`), under the
/// name the fuzz targets check for: the entry points above throw it.
@_spi(Fuzzing) public typealias RequestError = LiveBindHTTP.RequestError
