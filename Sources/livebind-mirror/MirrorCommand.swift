// livebind-mirror: a LiveBind client on the command line.
//
//   livebind-mirror [--token T] [--queue FILE] [--retries N] [--heartbeat S] [--max-event-bytes N] [--ca-file PEM] URL TARGET...
//       prints each mirrored model as one JSON line whenever it changes: {"model":…,"value":…}
//   livebind-mirror --commands [options] URL [TARGET...]
//       takes one JSON command a line on standard input and answers each with one line (the
//       protocol the client conformance tests drive; see docs/Clients.md).
import Foundation
import LiveBindClient

@main
struct MirrorCommand {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var options: [String: String] = [:]
        var commands = false
        while let first = arguments.first, first.hasPrefix("--") {
            arguments.removeFirst()
            if first == "--commands" {
                commands = true
            } else if ["--token", "--queue", "--retries", "--heartbeat", "--max-event-bytes", "--ca-file"].contains(first),
                !arguments.isEmpty
            {
                options[first] = arguments.removeFirst()
            } else {
                fail("unknown option \(first)")
            }
        }
        guard let address = arguments.first, let url = URL(string: address), url.scheme?.hasPrefix("http") == true else {
            fail(
                "usage: livebind-mirror [--commands] [--token T] [--queue FILE] [--retries N] [--heartbeat S] [--max-event-bytes N] [--ca-file PEM] URL TARGET..."
            )
        }
        let client: LiveBindClient
        do throws(LiveBindClientError) {
            client = try LiveBindClient(
                url: url, token: options["--token"], queueFile: options["--queue"].map { URL(fileURLWithPath: $0) },
                retries: options["--retries"].flatMap(Int.init) ?? 3,
                trustedCertificates: options["--ca-file"].map { URL(fileURLWithPath: $0) })
        } catch {
            fail(error.description)
        }
        let heartbeat = Duration.seconds(options["--heartbeat"].flatMap(Double.init) ?? 15)
        var targets: [MirrorTarget] = []
        for (number, text) in arguments.dropFirst().enumerated() {
            do throws(LiveBindClientError) {
                // A window or view gets a local place of its own (`rows-N/rows`), so several of one
                // array can be mirrored at once; `value` finds it by the target as written.
                let target = try MirrorTarget(text)
                targets.append(target.showsRows ? try MirrorTarget(text, into: "rows-\(number)/rows") : target)
            } catch {
                fail(error.description)
            }
        }
        let store = Store()
        var mirror: ServerMirror?
        if !targets.isEmpty {
            do throws(LiveBindClientError) {
                mirror = try client.mirror(
                    targets, into: store, heartbeat: heartbeat,
                    maxEventBytes: options["--max-event-bytes"].flatMap(Int.init) ?? 64 << 20)
            } catch {
                fail(error.description)
            }
        }
        if commands {
            await Commands(client: client, mirror: mirror).run()
        } else {
            guard mirror != nil else { fail("name at least one target") }
            let token = store.observeAll { commit in
                let value = (try? store.value(of: commit.model)) ?? .null
                let line = JSON.object(["model": .string(commit.model), "value": value])
                FileHandle.standardOutput.write(Data(line.encoded() + [UInt8(ascii: "\n")]))
            }
            while true { try? await Task.sleep(for: .seconds(3600)) }
            token.cancel()
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("livebind-mirror: \(message)\n".utf8))
        exit(2)
    }
}
