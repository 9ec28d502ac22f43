import OrderedCollections
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A write kept for later in the offline queue: sent in order, with its key, once the server answers.
public struct QueuedWrite: Sendable, Equatable {
    /// Its `Idempotency-Key`, given when it was made: a write sent before a crash is applied once.
    public var key: String
    /// `PUT`, `POST`, `PATCH` or `DELETE`.
    public var method: String
    /// The path and query it goes to (`/models/sensor/t`).
    public var path: String
    public var body: JSON?
    /// The revision it was made against (`If-Match`), if any.
    public var ifMatch: UInt64?
    /// The body's content type (`application/json` when nil).
    public var contentType: String?

    /// Its line in the queue file. `has_body` tells a JSON `null` body from none (files written
    /// before it have `"body": null` for none, and are read so).
    var record: JSON {
        var object: OrderedDictionary<String, JSON> = [
            "key": .string(key), "method": .string(method), "path": .string(path), "body": body ?? .null,
            "has_body": .bool(body.map { _ in true } ?? false), "if_match": ifMatch.map { .int(Int($0)) } ?? .null
        ]
        if let contentType { object["content_type"] = .string(contentType) }
        return .object(object)
    }

    init(key: String, method: String, path: String, body: JSON?, ifMatch: UInt64?, contentType: String?) {
        self.key = key
        self.method = method
        self.path = path
        self.body = body
        self.ifMatch = ifMatch
        self.contentType = contentType
    }

    init?(record: JSON) {
        guard let key = record["key"]?.stringValue, let method = record["method"]?.stringValue,
            let path = record["path"]?.stringValue
        else { return nil }
        let body = record["body"]
        let hasBody: Bool
        switch (record["has_body"], body) {
        case (.bool(let given)?, _): hasBody = given
        case (_, .none), (_, .some(.null)): hasBody = false
        default: hasBody = true
        }
        var ifMatch: UInt64?
        if case .int(let revision)? = record["if_match"], revision >= 0 { ifMatch = UInt64(revision) }
        // Not `hasBody ? … : nil`: JSON is ExpressibleByNilLiteral, so that `nil` would be JSON's null.
        let kept: JSON? = hasBody ? .some(body ?? .null) : .none
        self.init(
            key: key, method: method, path: path, body: kept, ifMatch: ifMatch,
            contentType: record["content_type"]?.stringValue)
    }
}

/// The offline queue: JSON lines in a file, rewritten whole (a temporary file, synced, renamed, the
/// folder synced) on every change; a line torn by a crash is skipped. A `flock` on `<file>.lock` keeps
/// two processes (an app and its restarted self, or the Python client on the same file: the format is
/// the same) from changing it at once; a write sent by both is applied once (its `Idempotency-Key`).
/// A change that cannot be stored (no such folder, a full disk, a read-only file system) throws and
/// leaves the file as it was.
final class WriteQueue: Sendable {
    let file: URL
    private let lock = OrderedMutex(())

    /// Why the queue could not be read or changed.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(file: URL) {
        self.file = file
    }

    /// Runs `body` with the queue locked, across threads and processes, on the writes it holds;
    /// what `body` leaves in them is written back when it changed.
    func withEntries<R>(_ body: (inout [QueuedWrite]) throws -> R) throws -> R {
        try lock.withLock { _ in
            let descriptor = open(file.path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw Failure(description: "cannot open \(file.path).lock: \(Self.reason())") }
            defer { close(descriptor) }
            guard flock(descriptor, LOCK_EX) == 0 else { throw Failure(description: "cannot lock \(file.path).lock: \(Self.reason())") }
            defer { _ = flock(descriptor, LOCK_UN) }
            var entries = read()
            let before = entries
            let result = try body(&entries)
            if entries != before { try rewrite(entries) }
            return result
        }
    }

    private func read() -> [QueuedWrite] {
        guard let data = FileManager.default.contents(atPath: file.path) else { return [] }
        return data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            (try? JSON(parsing: line)).flatMap(QueuedWrite.init(record:))
        }
    }

    private func rewrite(_ entries: [QueuedWrite]) throws {
        var bytes: [UInt8] = []
        for entry in entries {
            entry.record.encode(into: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        let temporary = file.path + ".tmp"
        let descriptor = open(temporary, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Failure(description: "cannot write \(temporary): \(Self.reason())") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            guard count > 0 else { break }
            written += count
        }
        let synced = written == bytes.count && fsync(descriptor) == 0
        let failure = Self.reason()
        close(descriptor)
        guard synced, rename(temporary, file.path) == 0 else {
            unlink(temporary)
            throw Failure(description: "cannot store the queue in \(file.path): \(failure)")
        }
        let folder = open(file.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
