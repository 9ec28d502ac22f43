internal import CGnuTLS
import Foundation

/// A certificate chain and its private key, read from PEM files and parsed by GnuTLS, ready to be
/// handed to a TLS handshake (see `MicroHTTPDCertificates`).
///
/// Immutable once made; the GnuTLS structures are freed when the last reference goes.
package final class MicroHTTPDCertificate: @unchecked Sendable {  // read-only after init; GnuTLS reads it concurrently
    /// The chain, leaf first, as GnuTLS's `gnutls_pcert_st` array.
    let chain: UnsafeMutablePointer<gnutls_pcert_st>
    /// How many certificates `chain` holds.
    let count: UInt32
    /// The private key of the leaf.
    let key: gnutls_privkey_t

    /// The largest certificate or key file read, in bytes: PEM chains are a few kB.
    static let maxFileSize = 1 << 20
    /// The most certificates in one chain file.
    static let maxChainLength: UInt32 = 16

    private init(chain: UnsafeMutablePointer<gnutls_pcert_st>, count: UInt32, key: gnutls_privkey_t) {
        self.chain = chain
        self.count = count
        self.key = key
    }

    deinit {
        for index in 0..<Int(count) { gnutls_pcert_deinit(chain + index) }
        chain.deallocate()
        gnutls_privkey_deinit(key)
    }

    /// Reads and checks the PEM certificate chain in `certificateFile` and the key in `keyFile`.
    /// The corresponding C functions are `gnutls_pcert_list_import_x509_raw`,
    /// `gnutls_privkey_import_x509_raw` and (for the key-matches-certificate check)
    /// `gnutls_certificate_set_x509_key_mem`.
    package static func load(certificateFile: String, keyFile: String) throws(TransportError) -> MicroHTTPDCertificate {
        let certificateBytes = try read(certificateFile)
        let keyBytes = try read(keyFile)
        let chain = UnsafeMutablePointer<gnutls_pcert_st>.allocate(capacity: Int(maxChainLength))
        var count = maxChainLength
        let imported = withDatum(certificateBytes) { datum in
            gnutls_pcert_list_import_x509_raw(chain, &count, &datum, GNUTLS_X509_FMT_PEM, 0)
        }
        guard imported >= 0, count > 0 else {
            chain.deallocate()
            throw .tlsInvalidCertificate(path: certificateFile, reason: message(imported, or: "no certificate found"))
        }
        var key: gnutls_privkey_t?
        var keyResult = gnutls_privkey_init(&key)
        if keyResult >= 0 {
            keyResult = withDatum(keyBytes) { datum in
                gnutls_privkey_import_x509_raw(key, &datum, GNUTLS_X509_FMT_PEM, nil, 0)
            }
        }
        guard keyResult >= 0, let key else {
            if let key { gnutls_privkey_deinit(key) }
            for index in 0..<Int(count) { gnutls_pcert_deinit(chain + index) }
            chain.deallocate()
            throw .tlsInvalidKey(path: keyFile, reason: message(keyResult, or: "no key found"))
        }
        let certificate = MicroHTTPDCertificate(chain: chain, count: count, key: key)
        let pairing = pairingResult(certificateBytes, keyBytes)
        if pairing == GNUTLS_E_CERTIFICATE_KEY_MISMATCH {
            throw .tlsKeyMismatch(certificate: certificateFile, key: keyFile)
        }
        if pairing < 0 { throw .tlsInvalidKey(path: keyFile, reason: message(pairing, or: "")) }
        return certificate
    }

    /// What GnuTLS says when given this certificate and key together: 0, or an error code
    /// (`GNUTLS_E_CERTIFICATE_KEY_MISMATCH` when the key is another certificate's).
    private static func pairingResult(_ certificate: [UInt8], _ key: [UInt8]) -> Int32 {
        var credentials: gnutls_certificate_credentials_t?
        guard gnutls_certificate_allocate_credentials(&credentials) >= 0, let credentials else { return GNUTLS_E_MEMORY_ERROR }
        defer { gnutls_certificate_free_credentials(credentials) }
        return withDatum(certificate) { certificateDatum in
            withDatum(key) { keyDatum in
                gnutls_certificate_set_x509_key_mem(credentials, &certificateDatum, &keyDatum, GNUTLS_X509_FMT_PEM)
            }
        }
    }

    /// The bytes of `path`, or the reason they cannot be had.
    private static func read(_ path: String) throws(TransportError) -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .tlsFileUnreadable(path: path, reason: "no such file")
        }
        if isDirectory.boolValue { throw .tlsFileUnreadable(path: path, reason: "it is a directory") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .tlsFileUnreadable(path: path, reason: "permission denied")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maxFileSize + 1) ?? Data()
        } catch {
            throw .tlsFileUnreadable(path: path, reason: "\(error)")
        }
        if data.count > maxFileSize {
            throw .tlsFileUnreadable(path: path, reason: "larger than \(maxFileSize) bytes")
        }
        if data.isEmpty { throw .tlsFileUnreadable(path: path, reason: "the file is empty") }
        return Array(data)
    }

    /// Runs `body` with a `gnutls_datum_t` over `bytes` (valid only inside `body`).
    private static func withDatum<Result>(_ bytes: [UInt8], _ body: (inout gnutls_datum_t) -> Result) -> Result {
        var copy = bytes
        return copy.withUnsafeMutableBufferPointer { buffer in
            var datum = gnutls_datum_t(data: buffer.baseAddress, size: UInt32(buffer.count))
            return body(&datum)
        }
    }

    /// GnuTLS's message for `code`, or `fallback` when `code` is not an error.
    private static func message(_ code: Int32, or fallback: String) -> String {
        guard code < 0, let text = gnutls_strerror(code) else { return fallback }
        return String(cString: text)
    }
}
