extension LiveBindServer {
    /// The answer to a write request, to be sent once every commit made so far is durable: whatever the
    /// write committed, the bindings it ran, and what it could have read. At once without a data
    /// directory, or when the disk has caught up; else deferred, with no thread waiting. When the data
    /// directory fails first, a success becomes 503 (the write is not kept; clients never saw it).
    static func answerOnceDurable(_ response: HTTPResponse, store: Store, counters: ServerCounters) -> HTTPResponse {
        guard store.log != nil else { return response }
        let answer = DeferredAnswer()
        store.whenDurable(through: store.lastSequence) { error in
            guard let error, response.status < 400 else { return answer.complete(response) }
            counters.addError()
            answer.complete(Problem.from(error).response)
        }
        return answer.response ?? .deferred(answer)
    }
}
