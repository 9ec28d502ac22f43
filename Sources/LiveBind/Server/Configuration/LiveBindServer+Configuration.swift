import LiveBindEngine
extension LiveBindServer {
    /// Everything a server can be tuned with, in groups; the defaults suit a laptop and thousands of
    /// streams. Each setting with a flag is declared once in ``settings``, which `livebind-server`'s
    /// options and ``validate()`` come from.
    public struct Configuration: Sendable {
        /// Where and how the server listens, and what it serves at `/`.
        public var network = Network()
        /// Tokens, sessions and origins.
        public var access = Access()
        /// What requests and models may cost.
        public var limits = Limits()
        /// Event streams and the events kept for resumes.
        public var streams = Streams()
        /// The data directory.
        public var persistence = Persistence()
        /// Makes the server a node of a cluster: the models live in a NATS JetStream stream that every
        /// node writes to and follows (see ``ClusterConfiguration``). nil (the default) is a single
        /// process. Not combined with a data directory: the stream is the durable copy. Used by
        /// ``LiveBindServer/init(configuration:logger:)``.
        public var cluster: ClusterConfiguration?

        /// A test seam: called on the data directory's writer thread before each sync.
        var beforeLogSync: (@Sendable () -> Void)?
        /// A test seam: called with each event frame before the event hub appends it (see `EventHub.Settings`).
        var beforeEventAppend: (@Sendable (EventFrame) -> Void)?
        /// A test seam: called while a stream's new views are arranged (see `EventHub.Settings`).
        var whileArrangingView: (@Sendable () -> Void)?
        /// A test seam: loopback addresses count against ``Streams/maxStreamsPerAddress`` too, so that a
        /// test (whose clients are all on loopback) can see the cap on a client that connects directly.
        var countsLoopbackStreams = false

        /// The defaults.
        public init() {}

        /// Where and how the server listens, and what it serves at `/`.
        public struct Network: Sendable {
            /// Numeric address to listen on (`127.0.0.1`, `0.0.0.0`, `::1`) or `localhost`.
            public var host: String = "127.0.0.1"
            /// Port to listen on; 0 picks a free one (read it back from `LiveBindServer.port`).
            public var port: Int = 8080
            /// Folder served at `/` (`index.html` and assets); nil serves ``builtinFiles``.
            public var publicDirectory: String?
            /// The `Content-Security-Policy` of the files served from ``publicDirectory``, one header line;
            /// nil (the default) allows only the site's own scripts, styles, images and connections (no
            /// inline `<style>`, `style=` or `<script>`): a page of one's own that needs more says so here.
            /// Empty sends none. The built-in dashboard always has the built-in policy.
            public var contentSecurityPolicy: String?
            /// Files served at `/` when ``publicDirectory`` is nil, by path relative to the site's root
            /// (`"index.html"`, `"examples/greenhouse.html"`): `livebind-server` passes the copy of `Public/`
            /// built into it. Empty (the default) serves no files.
            public var builtinFiles: [String: [UInt8]] = [:]
            /// PEM file with the server's certificate (then any intermediates): with ``tlsKeyFile`` the
            /// server speaks only HTTPS, and every answer carries `Strict-Transport-Security`. nil: plain HTTP.
            public var tlsCertificateFile: String?
            /// PEM file with the unencrypted private key of ``tlsCertificateFile``.
            public var tlsKeyFile: String?
            /// Addresses of reverse proxies (numeric IPv4/IPv6) whose `X-Forwarded-For` and `X-Forwarded-Proto`
            /// give the client's address and scheme; from any other peer those headers are ignored.
            public var trustedProxies: [String] = []
            /// Most connections libmicrohttpd holds; nil means `maxStreams + 512`, so writes always find a slot.
            public var connectionLimit: Int?
            /// Most connections libmicrohttpd takes from one TCP peer address; past it a new connection is
            /// closed at once, unanswered. nil means 128, or no cap when the server listens on loopback only
            /// or trusts a proxy (then its peers are shared by many clients). 0: no cap.
            public var maxConnectionsPerAddress: Int?
            /// Seconds without progress before a connection is closed: a client that stopped reading its
            /// event stream, or stopped sending its request. Never less than two heartbeats and 5 s.
            public var connectionTimeout: Int = 60
            /// Longest time a client may take to send a request's headers and body, however steadily it
            /// trickles them (slowloris); past it the connection is closed. Event streams, once answered,
            /// are not limited.
            public var requestTimeout: Duration = .seconds(30)
            /// libmicrohttpd worker threads.
            public var threadPoolSize: Int = 2
            /// Per-connection memory pool in bytes (request headers and the write buffer). libmicrohttpd
            /// takes request headers up to about half of it: 16 kB holds a 6 kB cookie; larger headers get 431.
            public var connectionMemoryLimit: Int = 16 * 1024
            /// Kernel send buffer per socket in bytes, so a stalled reader holds little memory; 0 keeps the default.
            public var sendBufferSize: Int = 64 * 1024

            /// The defaults.
            public init() {}
        }

        /// Tokens, sessions and origins.
        public struct Access: Sendable {
            /// Bearer tokens, JWTs, private reads and other allowed origins; by default anyone who can
            /// reach the port may write, and only the server's own pages may write from a browser.
            public var policy = AccessPolicy()
            /// Longest bearer token looked at, in bytes (header, `?access_token=`, `POST /session`); a
            /// longer one is refused with 401 unread. JWTs with many claims or an RSA-4096 signature need
            /// a few kB.
            public var maxTokenLength: Int = 4096
            /// Most cookie sessions (`POST /session`) at once; past it the expired ones go first, then the
            /// requesting credential's own oldest (its streams get `auth_revoked`); when every session is
            /// live and another credential's, `POST /session` gets 503 with `Retry-After`.
            public var maxSessions: Int = 10_000
            /// Most cookie sessions one credential (a static token, a JWT's subject, or a JWT without one)
            /// holds at once; past it its own oldest session ends. Others' sessions are never ended for it.
            public var maxSessionsPerCredential: Int = 16
            /// Longest a session lasts; it also ends when the token it was made from expires.
            public var sessionLifetime: Duration = .seconds(8 * 3600)
            /// Whether session cookies always get `Secure` (sent only over HTTPS). They get it anyway when
            /// the request came over https: TLS here, or `X-Forwarded-Proto: https` from a trusted proxy.
            /// Set it when a proxy that is not trusted ends TLS in front of the server.
            public var secureCookies = false
            /// Whether an anonymous write records its client's address as its author in the history's
            /// audit trail (personal data in many places: off by default, recorded as `anonymous`).
            public var auditAddresses = false

            /// The defaults.
            public init() {}
        }

        /// What requests and models may cost.
        public struct Limits: Sendable {
            /// What models may become (nesting depth, bytes per model and in all, operations per JSON
            /// Patch); a write past a limit gets 413 or 422. Used when the server makes its own store.
            public var store = StoreLimits()
            /// Most bindings at once (definition file, Swift and `POST /bindings` together); more get 422.
            /// Used when the server makes its own registry.
            public var maxBindings = 10_000
            /// Largest request body accepted, in bytes (413 past it).
            public var bodyLimit: Int = 1 << 20
            /// Most bytes of one page of `GET /models` or `GET /bindings` (at least one entry a page); a
            /// longer list ends its page with `"next"`, asked for again with `?after=`.
            public var maxListBytes: Int = 1 << 20
            /// Writes a second each client may make (its bearer token, or its address without one), after
            /// ``writeBurst`` at once; past it, 429 with `Retry-After`. Reads and streams are not limited.
            /// 0, the default, limits nothing.
            public var writeRate: Double = 0
            /// Writes a client may make at once before ``writeRate`` applies; 0 means the rate rounded up.
            public var writeBurst: Int = 0
            /// Most clients whose write rate is tracked at once; past it, those idle longest are forgotten.
            public var writeRateClients: Int = 10_000
            /// How long the answer to a write sent with `Idempotency-Key` is kept for a retry with the
            /// same key (Stripe keeps keys for 24 hours too).
            public var idempotencyWindow: Duration = .seconds(86_400)
            /// Most `Idempotency-Key` answers kept at once; past it the oldest are forgotten.
            public var idempotencyKeys: Int = 100_000

            /// The defaults.
            public init() {}
        }

        /// Event streams and the events kept for resumes.
        public struct Streams: Sendable {
            /// Most event streams open at once; more get 503.
            public var maxStreams: Int = 10_000
            /// Most event streams one client address may hold at once (the forwarded address behind a
            /// trusted proxy); more get 503. Loopback addresses are not counted. 0: no cap.
            public var maxStreamsPerAddress: Int = 64
            /// Time between heartbeat comments on idle streams.
            public var heartbeat: Duration = .seconds(15)
            /// Most recent events kept for `Last-Event-ID` resumes (older resumes get `resync`), and kept
            /// in the data directory. The log is also bounded by ``retainedBytes``: whichever is reached first.
            public var retainedEvents: Int = 4096
            /// Most bytes of recent events kept for resumes: the one log every stream reads from, so the
            /// memory events take however many streams there are. The newest event is always kept.
            public var retainedBytes: Int = 64 << 20
            /// Most bytes of snapshots and events one stream may hold unsent while its client reads
            /// nothing: a stream past it that wrote nothing for a heartbeat interval is closed (a client
            /// that reconnects resumes with `Last-Event-ID`). Smaller stalled streams are closed by
            /// ``Network/connectionTimeout``.
            public var streamBufferLimit: Int = 1 << 20
            /// Most bytes of snapshots and events all streams together may hold unsent, each frame counted
            /// once however many streams share it: past it, streams whose clients read nothing are closed,
            /// fattest first, and a new stream that still finds it spent gets 503 with `Retry-After`.
            /// Snapshots are charged before they are made: a stream whose own snapshots (or replay)
            /// reach it gets 413.
            public var maxUnsentBytes: Int = 256 << 20
            /// Most `sub` values (locations and windows) one event stream may have; more get 422.
            public var maxSubscriptions: Int = 64
            /// Most rows one window (`sub=…;first=N`, `last=N`, `limit=N`) may show; more get 422.
            public var maxWindow: Int = 10_000
            /// Most distinct views (`sub=…;where=…;order=…`) shown at once, each holding its array
            /// arranged (memory in proportion to its length); a stream asking for another gets 503.
            public var maxViews: Int = 256
            /// Most array elements all views together keep arranged (each costs about 200 bytes): a
            /// stream asking for a view past it gets 503, and as arrays grow the largest views past it
            /// end their streams.
            public var maxViewRows: Int = 1_000_000
            /// Most values one view's filter compares an element with (one per condition, one per
            /// value of an `in` list), so arranging a view of n elements costs at most n times this
            /// many comparisons; more get 422. Bindings' `view` transforms too.
            public var maxViewTerms: Int = 256
            /// Most values in one `in` list of a view's filter; more get 422.
            public var maxViewInValues: Int = 128
            /// Most bytes of one view's written `where` and `order` together; more get 422.
            public var maxViewQueryBytes: Int = 8192

            /// Most entries in one presence room; a join past it gets 503.
            public var maxPresencePerRoom: Int = 1000
            /// Most presence entries one caller (its credential, or its address when anonymous) holds
            /// in all rooms; a join past it gets 422.
            public var maxPresencePerCaller: Int = 32
            /// Most bytes of one presence entry's `meta`, encoded; more get 422.
            public var maxPresenceBytes: Int = 1024
            /// How long a presence entry stays when no stream holds its key: a stream that reconnects
            /// within it keeps the entry, and an entry joined and never claimed leaves after it.
            public var presenceGrace: Duration = .seconds(5)
            /// Most bytes of the writes one presence entry registers for when it leaves
            /// (`PUT /presence/{room}/{id}/disconnect`); more get 413.
            public var maxDisconnectBytes: Int = 16384

            /// The bounds every view query is parsed with (streams and bindings).
            public var viewLimits: ViewQuery.Limits {
                ViewQuery.Limits(maxTerms: maxViewTerms, maxInValues: maxViewInValues, maxBytes: maxViewQueryBytes)
            }

            /// The defaults.
            public init() {}
        }

        /// The data directory.
        public struct Persistence: Sendable {
            /// Folder holding `livebind.sqlite` (created when missing): the models, the event ids, the
            /// retained events and the bindings made over HTTP survive restarts, and a write is answered
            /// (and streamed) only once it is on disk. Writes that arrive while the disk syncs share the
            /// next sync. nil keeps everything in memory (lost at exit). Used by
            /// ``LiveBindServer/init(configuration:logger:)``.
            public var dataDirectory: String?
            /// With a data directory: bytes of commit log after which the models changed since the last
            /// checkpoint are written whole, in the background. A restart replays at most about this much
            /// log; larger values write whole documents less often.
            public var checkpointBytes: Int = 16 << 20
            /// With a data directory: how much history `history.sqlite` keeps for `?history`, `?at` and
            /// `/events?since=` — an age (`7d`), a size (`10GB`) or both (`7d,10GB`, whichever is
            /// reached first); `0` keeps none.
            public var history = "7d,1GB"
            /// Most changes one history query may read (422 past it).
            public var historyMaxScan = 1_000_000
            /// Most points one history query may answer without `step` (422 past it).
            public var historyMaxPoints = 100_000
            /// Most buckets one history query may answer with `step` (422 past it).
            public var historyMaxBuckets = 11_000
            /// Most bytes one history answer may hold (`?history`, `?at=`, the past part of
            /// `/events?since=`), counted as it is written (422 past it): the points and buckets limits
            /// count values, and a value may be a whole document.
            public var historyMaxBytes: Int = 32 << 20

            /// The defaults.
            public init() {}
        }

        /// Throws when a setting holds a value it does not take (``settings``), or when settings that
        /// go together do not: a cluster with a data directory, a cluster's settings
        /// (``ClusterConfiguration/validate()``). `start()` calls it; the files it names (certificate,
        /// key, folders) are checked when they are opened.
        public func validate() throws(ConfigurationError) {
            for setting in Self.settings { try setting.check(self) }
            if let cluster {
                try cluster.validate()
            }
        }

        /// The idle timeout actually used: long enough that a heartbeat always comes first.
        var effectiveConnectionTimeout: Int {
            let heartbeatSeconds = Int(streams.heartbeat.components.seconds) + 1
            return max(network.connectionTimeout, 2 * heartbeatSeconds + 5)
        }

        /// The connection limit actually used.
        var effectiveConnectionLimit: Int { network.connectionLimit ?? (streams.maxStreams + 512) }

        /// The per-address connection cap actually used; 0: none.
        var effectiveMaxConnectionsPerAddress: Int {
            if let limit = network.maxConnectionsPerAddress { return limit }
            return AccessControl.isLoopback(address: network.host) || !network.trustedProxies.isEmpty ? 0 : 128
        }
    }
}
