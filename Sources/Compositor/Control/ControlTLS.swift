import Foundation
import HummingbirdTLS
import NIOSSL

/// HTTPS on the control port (`--tls-cert FILE --tls-key FILE`): the page, WHEP, the HLS ladder and the API, with the
/// token no longer in clear, and the page a secure context for the browser (Picture-in-Picture windows of documents
/// need one). The files are read and checked before anything starts: a certificate that does not parse, a key that
/// is not the certificate's, a file that cannot be read, each refused with what to do.
public struct ControlTLS: Sendable {
    public let certificatePath: String
    public let keyPath: String
    let configuration: TLSConfiguration

    public init(certificate: String, key: String) throws(ControlError) {
        certificatePath = certificate
        keyPath = key
        for (option, path) in [("--tls-cert", certificate), ("--tls-key", key)] where !FileManager.default.isReadableFile(atPath: path) {
            throw .bad("\(option) '\(path)' cannot be read: give a PEM file you can read")
        }
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificate) } catch {
            throw .bad("--tls-cert '\(certificate)' holds no PEM certificate (\(error)): give the certificate (and "
                       + "its chain) in PEM, -----BEGIN CERTIFICATE-----")
        }
        guard !chain.isEmpty else {
            throw .bad("--tls-cert '\(certificate)' holds no certificate: give it in PEM, -----BEGIN CERTIFICATE-----")
        }
        let privateKey: NIOSSLPrivateKey
        do { privateKey = try NIOSSLPrivateKey(file: key, format: .pem) } catch {
            throw .bad("--tls-key '\(key)' holds no PEM private key (\(error)); an encrypted key is not supported: "
                       + "give it unencrypted, readable by you alone")
        }
        let config = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                              privateKey: .privateKey(privateKey))
        // Making the context checks that the key belongs to the certificate.
        do { _ = try NIOSSLContext(configuration: config) } catch {
            throw .bad("--tls-key '\(key)' is not the key of --tls-cert '\(certificate)' (\(error)): give the pair "
                       + "that was issued together")
        }
        configuration = config
    }
}
