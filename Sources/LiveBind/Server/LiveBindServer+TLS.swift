import LiveBindEngine
internal import LiveBindHTTP
extension LiveBindServer {
    /// Reads the certificate and key files again and serves them to every new connection; open
    /// connections, event streams among them, keep the certificate they were made with. On error the
    /// old certificate stays in use. Call it when the files changed (the executable does on SIGHUP).
    public func reloadCertificate() throws(ServerError) {
        guard let daemon = runningDaemon, daemon.options.certificate != nil,
            let certificate = try loadCertificate()
        else { throw .tlsNotRunning }
        daemon.replaceCertificate(certificate)
        logger.info("TLS certificate reloaded from \(configuration.network.tlsCertificateFile ?? "")")
    }

    /// Whether the server speaks HTTPS (a certificate and key are configured).
    public var usesTLS: Bool { configuration.network.tlsCertificateFile != nil || configuration.network.tlsKeyFile != nil }

    /// The configured certificate, read and checked; nil when TLS is off.
    func loadCertificate() throws(ServerError) -> MicroHTTPDCertificate? {
        switch (configuration.network.tlsCertificateFile, configuration.network.tlsKeyFile) {
        case (nil, nil): return nil
        case (let certificate?, let key?):
            do throws(TransportError) {
                return try MicroHTTPDCertificate.load(certificateFile: certificate, keyFile: key)
            } catch {
                throw ServerError(error)
            }
        default: throw .tlsIncomplete
        }
    }
}
