import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindHTTP
@testable import LiveBindEngine

/// The table of `Idempotency-Key` answers (its HTTP behaviour, restarts, crashes and clusters are
/// tested against the running server in Tests/property/test_idempotency.py and Tests/cluster).
@Suite("Idempotency keys") struct IdempotencyTableTests {
    static func ticket(_ key: String, body: String = "1", secret: String? = nil, serial: UInt64 = 1) throws -> IdempotencyTicket {
        var request = HTTPRequest(
            method: .post, path: "/models/m/items", headers: ["Idempotency-Key": key, "Content-Type": "application/json"],
            body: Array(body.utf8))
        request.serial = serial
        let credential = secret.map { AccessControl.Credential(scopes: [.read, .write], prefixes: nil, rateKey: $0) }
        return try #require(
            try IdempotencyTicket(request, grant: AccessControl.Grant(reach: .everything, credential: credential), flags: "i"))
    }

    static func answered(_ status: Int = 200) -> HTTPResponse {
        .bytes(Array(#"{"id":"1","rev":1}"#.utf8), status: status, contentType: "application/json")
    }

    @Test func aRetryGetsTheFirstAnswerAndAnotherRequestIsRefused() throws {
        let table = IdempotencyTable(window: .seconds(60), capacity: 10)
        let first = try Self.ticket("k")
        #expect(try table.begin(first) == nil)
        #expect(throws: IdempotencyError.inUse(key: "k")) { try table.begin(try Self.ticket("k", serial: 2)) }
        #expect(try table.begin(first) == nil)  // the same request, run again (a cluster's lost race)
        table.settle(first, Self.answered())
        #expect(try table.begin(try Self.ticket("k", serial: 3))?.status == 200)
        #expect(throws: IdempotencyError.reused(key: "k")) { try table.begin(try Self.ticket("k", body: "2", serial: 4)) }
        // A 5xx frees the key: the retry runs.
        let failed = try Self.ticket("f")
        #expect(try table.begin(failed) == nil)
        table.settle(failed, Self.answered(503))
        #expect(try table.begin(try Self.ticket("f", serial: 5)) == nil)
    }

    @Test func keysArePerCredential() throws {
        let table = IdempotencyTable(window: .seconds(60), capacity: 10)
        let alpha = try Self.ticket("k", secret: "alpha"), beta = try Self.ticket("k", body: "2", secret: "beta", serial: 2)
        #expect(alpha.key != beta.key)
        #expect(try table.begin(alpha) == nil)
        #expect(try table.begin(beta) == nil)
    }

    /// One credential flooding the table loses its own oldest keys past its share (an eighth), not
    /// everyone else's, and a running request keeps its key whatever comes after it.
    @Test func oneCredentialCannotPushOthersOut() throws {
        let table = IdempotencyTable(window: .seconds(60), capacity: 80)
        let victim = try Self.ticket("mine", secret: "victim")
        #expect(try table.begin(victim) == nil)
        table.settle(victim, Self.answered())
        let running = try Self.ticket("running", secret: "other", serial: 2)
        #expect(try table.begin(running) == nil)
        for number in 0..<10_000 {
            let flood = try Self.ticket("flood-\(number)", secret: "flooder", serial: UInt64(10 + number))
            #expect(try table.begin(flood) == nil)
            table.settle(flood, Self.answered(404))
        }
        #expect(table.count <= 80)
        #expect(try table.begin(try Self.ticket("mine", secret: "victim", serial: 3))?.status == 200)
        #expect(throws: IdempotencyError.inUse(key: "running")) { try table.begin(try Self.ticket("running", secret: "other", serial: 4)) }
    }

    @Test func aReceiptTeachesTheAnswerWithItsOwnAge() throws {
        let table = IdempotencyTable(window: .seconds(60), capacity: 10)
        let ticket = try Self.ticket("k")
        let receipt = CommitReceipt(tag: ticket.tag, sequence: 42, model: "m", revision: 7, insertIndex: 3, created: 0)
        table.learn(receipt)
        let answer = try #require(try table.begin(try Self.ticket("k", serial: 9)))
        #expect(answer.status == 200 && String(decoding: answer.body, as: UTF8.self) == #"{"id":"42","rev":7,"index":3}"#)
        #expect(
            table.receipts(through: 42, sequence: 0).commits.map(\.sequence) == [42]
                && table.receipts(through: 41, sequence: 0).commits.isEmpty)
        // A receipt older than the window (by the time in its tag) teaches nothing.
        let old = IdempotencyTable(window: .seconds(60), capacity: 10)
        old.learn(receipt, now: Date().addingTimeInterval(120))
        #expect(old.count == 0)
    }

    /// A `/bindings` write's receipt holds its answer: kept as JSON (a data directory, a snapshot) and
    /// read back whole, it teaches a running request with the key (this node's own) its answer.
    @Test func anAnswerReceiptTravelsWholeAndTakesOverTheRunningRequest() throws {
        let table = IdempotencyTable(window: .seconds(60), capacity: 10)
        let ticket = try Self.ticket("b")
        #expect(try table.begin(ticket) == nil)
        var made = HTTPResponse.bytes(Array(#"{"id":"b1","enabled":true}"#.utf8), status: 201, contentType: "application/json")
        made.headers.add("Location", "/bindings/b1")
        let receipt = try #require(AnswerReceipt(tag: ticket.tag, response: made, sequence: 7))
        let copy = try #require(AnswerReceipt(json: try JSON(parsing: receipt.json.encoded())))
        #expect(copy.tag == receipt.tag && copy.sequence == 7 && copy.answer.body == receipt.answer.body)
        table.learn(copy)
        let answer = try #require(try table.begin(try Self.ticket("b", serial: 2)))
        #expect(answer.status == 201 && answer.headers.contains { $0 == ("Location", "/bindings/b1") })
        #expect(table.receipts(through: 0, sequence: 7).answers.count == 1 && table.receipts(through: 0, sequence: 6).answers.isEmpty)
        #expect(AnswerReceipt(tag: ticket.tag, response: Self.answered(503), sequence: 8) == nil)
        #expect(AnswerReceipt(json: .array([.string("x")])) == nil)
    }

    /// Answers as large as the body limit (a `/bindings` description) are kept within a byte budget,
    /// oldest first (found by review: the count alone let 100,000 answers of 1 MiB stay).
    @Test func largeAnswersStayWithinTheByteBudget() throws {
        let table = IdempotencyTable(window: .seconds(60), capacity: 100_000)
        let big = HTTPResponse.bytes([UInt8](repeating: 0x20, count: 1 << 20), status: 201, contentType: "application/json")
        for number in 0..<100 {
            let ticket = try Self.ticket("big-\(number)", serial: UInt64(number + 1))
            #expect(try table.begin(ticket) == nil)
            table.settle(ticket, big)
        }
        #expect(table.count <= IdempotencyTable.maxAnswerBytes / (1 << 20) && table.count >= 32)
        #expect(try table.begin(try Self.ticket("big-99", serial: 500))?.status == 201)  // the newest stays
    }

    @Test func keysThatAreNoKeysAreRefused() {
        for key in ["", "a b", String(repeating: "x", count: 256), "caf\u{E9}"] {
            #expect(throws: IdempotencyError.invalid) { _ = try Self.ticket(key) }
        }
    }
}
