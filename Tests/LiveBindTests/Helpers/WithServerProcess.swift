/// Runs the built `livebind-server` executable (see ``ServerProcess``) on port 0 with `arguments`,
/// runs `body` with the port it reports, then stops it with SIGTERM (SIGKILL if it has not exited
/// within 20 s).
///
/// For tests that need more sockets than one process may hold: the server's sockets count against
/// its own open-file limit, not the test's.
func withServerProcess<Result>(_ arguments: [String], _ body: (Int) throws -> Result) throws -> Result {
    let server = try ServerProcess(arguments)
    defer {
        if (try? server.terminate()) == nil { try? server.kill() }
    }
    return try body(try server.waitForPort(timeout: 30))
}
