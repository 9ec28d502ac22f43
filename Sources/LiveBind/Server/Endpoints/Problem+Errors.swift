import LiveBindEngine
internal import LiveBindHTTP
extension Problem {
    /// THE mapping from any error to a problem. Every error response goes through here.
    static func from(_ error: any Error) -> Problem {
        if let error = error as? ProblemError { return error.problem }
        if let error = error as? IdempotencyError { return error.problem }
        if let error = error as? PresenceError { return error.problem }
        if let error = error as? RequestError { return from(error) }
        if let error = error as? StoreError { return from(error) }
        if let error = error as? HistoryError { return from(error) }
        if let error = error as? BindingError { return from(error) }
        if let error = error as? AccessError { return from(error) }
        if let error = error as? ClusterError {
            if case .tooLarge = error {
                return Problem(status: 413, kind: "limit-exceeded", title: "Content Too Large", detail: error.description)
            }
            var problem = Problem(status: 503, kind: "cluster-unavailable", title: "Service Unavailable", detail: error.description)
            problem.headers.add("Retry-After", "1")
            return problem
        }
        if let error = error as? PathError {
            return Problem(status: 400, kind: "invalid-path", title: "Bad Request", detail: error.description)
        }
        if let error = error as? JSONError {
            return Problem(status: 400, kind: "malformed-json", title: "Bad Request", detail: "not valid JSON: \(error)")
        }
        return Problem(status: 500, kind: "internal", title: "Internal Server Error", detail: "\(error)")
    }

    static func from(_ failure: HTTPTransportFailure) -> Problem {
        switch failure {
        case .bodyTooLarge(let limit): from(RequestError.bodyTooLarge(limit: limit))
        case .lengthRequired: from(RequestError.lengthRequired)
        case .malformedRequest(let reason): from(RequestError.badRequest(reason))
        case .ambiguousFraming(let reason): closing(from(RequestError.badRequest(reason)))
        case .unsupportedTransferCoding(let coding):
            closing(
                Problem(
                    status: 501, kind: "not-implemented", title: "Not Implemented",
                    detail: "Transfer-Encoding '\(coding)' is not supported: send the body as it is, or chunked"))
        }
    }

    /// `problem`, answered on a connection that is then closed: after a request whose end is in doubt,
    /// the next bytes on it are not to be trusted.
    private static func closing(_ problem: Problem) -> Problem {
        var problem = problem
        problem.headers.add("Connection", "close")
        return problem
    }

    private static func from(_ error: RequestError) -> Problem {
        let detail = error.description
        switch error {
        case .notFound: return Problem(status: 404, kind: "not-found", title: "Not Found", detail: detail)
        case .methodNotAllowed(let allowed):
            var problem = Problem(status: 405, kind: "method-not-allowed", title: "Method Not Allowed", detail: detail)
            problem.headers.add("Allow", RequestError.allowHeader(allowed))
            return problem
        case .unsupportedMediaType:
            return Problem(status: 415, kind: "unsupported-media-type", title: "Unsupported Media Type", detail: detail)
        case .weakPrecondition, .nothingToMatch:
            return Problem(status: 412, kind: "stale-revision", title: "Precondition Failed", detail: detail)
        case .malformedBody, .badRequest, .invalidPrecondition, .invalidSubscription:
            return Problem(status: 400, kind: "bad-request", title: "Bad Request", detail: detail)
        case .unknownStream:
            return Problem(status: 404, kind: "not-found", title: "Not Found", detail: detail)
        case .tooManySubscriptions(_, let limit):
            var problem = Problem(status: 422, kind: "limit-exceeded", title: "Unprocessable Content", detail: detail)
            problem.limit = (setting: "max-subscriptions", value: limit)
            return problem
        case .windowTooLarge(_, _, let limit):
            var problem = Problem(status: 422, kind: "limit-exceeded", title: "Unprocessable Content", detail: detail)
            problem.limit = (setting: "max-window", value: limit)
            return problem
        case .viewQueryTooLarge(_, _, let setting, let limit):
            var problem = Problem(status: 422, kind: "limit-exceeded", title: "Unprocessable Content", detail: detail)
            problem.limit = (setting: setting, value: limit)
            return problem
        case .conflictingSubscription, .unknownSubscription:
            return Problem(status: 422, kind: "invalid-subscription", title: "Unprocessable Content", detail: detail)
        case .patchNotApplicable:
            return Problem(status: 422, kind: "cannot-apply", title: "Unprocessable Content", detail: detail)
        case .bodyTooLarge:
            return Problem(status: 413, kind: "body-too-large", title: "Content Too Large", detail: detail)
        case .lengthRequired:
            return Problem(status: 411, kind: "length-required", title: "Length Required", detail: detail)
        case .tooManyWrites(let retryAfter, _, _):
            var problem = Problem(status: 429, kind: "rate-limited", title: "Too Many Requests", detail: detail)
            problem.headers.add("Retry-After", String(retryAfter))
            return problem
        case .tooManySessions(_, let retryAfter):
            var problem = Problem(status: 503, kind: "unavailable", title: "Service Unavailable", detail: detail)
            problem.headers.add("Retry-After", String(retryAfter))
            return problem
        case .tooManyStreams, .tooManyStreamsFromAddress, .unsentBytesSpent, .shuttingDown:
            var problem = Problem(status: 503, kind: "unavailable", title: "Service Unavailable", detail: detail)
            problem.headers.add("Retry-After", "5")
            if case .unsentBytesSpent(let limit) = error { problem.limit = (setting: "max-unsent-bytes", value: limit) }
            return problem
        case .snapshotsTooLarge(_, let limit):
            var problem = Problem(status: 413, kind: "limit-exceeded", title: "Content Too Large", detail: detail)
            problem.limit = (setting: "max-unsent-bytes", value: limit)
            return problem
        case .tooManyViews(let limit), .tooManyViewRows(let limit):
            var problem = Problem(status: 503, kind: "unavailable", title: "Service Unavailable", detail: detail)
            problem.headers.add("Retry-After", "5")
            if case .tooManyViews = error {
                problem.limit = (setting: "max-views", value: limit)
            } else {
                problem.limit = (setting: "max-view-rows", value: limit)
            }
            return problem
        }
    }

    private static func from(_ error: AccessError) -> Problem {
        let detail = error.description
        switch error {
        case .missingToken, .invalidToken, .rejectedToken, .unknownSession:
            var problem = Problem(status: 401, kind: "unauthorized", title: "Unauthorized", detail: detail)
            problem.headers.add(
                "WWW-Authenticate",
                error == .missingToken(forStream: false) || error == .missingToken(forStream: true)
                    ? #"Bearer realm="livebind""# : #"Bearer realm="livebind", error="invalid_token""#)
            return problem
        case .missingScope:
            var problem = Problem(status: 403, kind: "forbidden", title: "Forbidden", detail: detail)
            problem.headers.add("WWW-Authenticate", #"Bearer realm="livebind", error="insufficient_scope""#)
            return problem
        case .modelNotCovered, .metricsNeedEveryModel, .testNeedsRead, .originNotAllowed, .crossSite, .hostNotAllowed:
            return Problem(status: 403, kind: "forbidden", title: "Forbidden", detail: detail)
        }
    }

    private static func from(_ error: HistoryError) -> Problem {
        let detail = error.description
        switch error {
        case .off: return Problem(status: 404, kind: "not-found", title: "Not Found", detail: detail)
        case .before: return Problem(status: 410, kind: "history-gone", title: "Gone", detail: detail)
        case .limit(let flag, let limit, _):
            var problem = Problem(status: 422, kind: "limit-exceeded", title: "Unprocessable Content", detail: detail)
            problem.limit = (setting: flag, value: limit)
            return problem
        case .busy, .unreadable:
            var problem = Problem(status: 503, kind: "unavailable", title: "Service Unavailable", detail: detail)
            problem.headers.add("Retry-After", "1")
            return problem
        }
    }

    private static func from(_ error: StoreError) -> Problem {
        let detail = error.description
        switch error {
        case .modelNotFound, .pathNotFound:
            return Problem(status: 404, kind: "not-found", title: "Not Found", detail: detail)
        case .invalidModelName, .invalidPath, .invalidPatch:
            return Problem(status: 400, kind: "bad-request", title: "Bad Request", detail: detail)
        case .revisionMismatch:
            return Problem(status: 412, kind: "stale-revision", title: "Precondition Failed", detail: detail)
        case .typeMismatch, .indexOutOfRange, .testFailed, .invalidValue, .validationFailed:
            return Problem(status: 422, kind: "cannot-apply", title: "Unprocessable Content", detail: detail)
        case .limitExceeded(let limit, _, _):
            let status = limit == .depth || limit == .patchOperations ? 422 : 413
            let title = status == 413 ? "Content Too Large" : "Unprocessable Content"
            return Problem(
                status: status, kind: "limit-exceeded", title: title,
                detail: "\(detail); raise it with \(flag(for: limit))")
        case .storageFailed:
            var problem = Problem(status: 503, kind: "storage-unavailable", title: "Service Unavailable", detail: detail)
            problem.headers.add("Retry-After", "5")
            return problem
        }
    }

    /// The `livebind-server` flag that raises `limit` (a ``LiveBindServer/Configuration/limits`` member).
    static func flag(for limit: StoreLimit) -> String {
        switch limit {
        case .depth: "--max-depth"
        case .modelSize, .writeWork: "--max-model-size"
        case .storeSize: "--max-store-size"
        case .patchOperations: "--max-patch-operations"
        }
    }

    private static func from(_ error: BindingError) -> Problem {
        let detail = error.description
        switch error {
        case .store(let inner): return from(inner)
        case .bindingNotFound: return Problem(status: 404, kind: "not-found", title: "Not Found", detail: detail)
        case .duplicateID: return Problem(status: 409, kind: "conflict", title: "Conflict", detail: detail)
        case .queryTooLarge(_, _, _, let bound):
            var problem = Problem(
                status: 422, kind: "limit-exceeded", title: "Unprocessable Content",
                detail: "\(detail) (--\(bound.setting))")
            problem.limit = (setting: bound.setting, value: bound.limit)
            return problem
        case .tooManyBindings:
            return Problem(
                status: 422, kind: "limit-exceeded", title: "Unprocessable Content",
                detail: "\(detail); raise it with --max-bindings")
        case .invalidSpec, .invalidDefinition, .unknownTransform, .invalidParameter, .notReversible, .unsettledCycle,
            .transformFailed, .decodingFailed, .propagationLimit:
            return Problem(status: 422, kind: "cannot-apply", title: "Unprocessable Content", detail: detail)
        }
    }
}
