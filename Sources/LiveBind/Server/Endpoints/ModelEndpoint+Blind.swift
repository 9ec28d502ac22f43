import LiveBindEngine
internal import LiveBindHTTP
/// Writes by a caller who may not read the model: with `--private`, a token with `write` but not
/// `read` on it. Its answers say whether the write applied (with the revision and event id a write
/// answers), and when it did not, one refusal for every reason the model's content decides (409
/// `write-refused`): never a value, length, type or size of what the model holds. Refusals decided by the
/// request alone (its media type, a body that is not JSON) keep their own status. A JSON Patch `test`
/// reads the model, so it is refused outright (403).
extension ModelEndpoint {
    /// `PUT`, `DELETE`, `PATCH` or `POST` on `/models/{name}{pointer}`, blind.
    func blindWrite(_ name: String, _ pointer: String, _ request: HTTPRequest) throws -> HTTPResponse {
        if request.method == .patch, request.mediaType == RequestBody.jsonPatch,
            case .array(let operations)? = try? RequestBody.parseJSON(request),
            operations.contains(where: { $0["op"] == "test" })
        {
            throw AccessError.testNeedsRead(name)
        }
        do {
            return try write(name, pointer, request, revealsIndex: false)
        } catch {
            guard Self.describesTheModel(error) else { throw error }
            // One answer for every refusal the model's content decides: their statuses and types told
            // apart would be a bit per request (a JSON Patch can end in an op that always fails one way,
            // after a probe that fails another way only when the model is as guessed).
            throw ProblemError(
                problem: Problem(
                    status: 409, kind: "write-refused", title: "Conflict",
                    detail: "the write does not apply to the model as it is; this token may not read \"\(name)\", "
                        + "so the answer says no more"))
        }
    }

    /// Whether `error` comes from what the model holds, not from the request alone.
    private static func describesTheModel(_ error: any Error) -> Bool {
        if error is StoreError || error is BindingError { return true }
        guard let error = error as? RequestError else { return false }
        switch error {
        case .patchNotApplicable, .nothingToMatch, .weakPrecondition: return true
        default: return false
        }
    }
}
