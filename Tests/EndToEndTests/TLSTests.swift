import Compositor
import Foundation
import Testing
import TestSupport

/// A certificate for 127.0.0.1 (and localhost) made now, its key, and the SHA-256 of its public key (base64), which
/// a browser told to trust it takes.
func makeCertificate(_ dir: TempDir, name: String = "cert") throws -> (cert: String, key: String, spki: String) {
    let cert = dir.file(name + ".pem"), key = dir.file(name + "-key.pem")
    let made = try tool(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
    #expect(made.status == 0, "\(made.err)")
    let spki = try tool(["sh", "-c", "openssl x509 -in '\(cert)' -pubkey -noout | openssl pkey -pubin -outform der | "
                         + "openssl dgst -sha256 -binary | base64"])
    return (cert, key, spki.out.trimmingCharacters(in: .whitespacesAndNewlines))
}

/// A GET over HTTPS that trusts `ca` alone (Python's ssl); the status, or the error's text.
func httpsGet(_ url: String, ca: String, token: String?) throws -> String {
    let script = """
    import ssl, sys, urllib.request, urllib.error
    req = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[3]} if sys.argv[3] else {})
    try:
        print(urllib.request.urlopen(req, context=ssl.create_default_context(cafile=sys.argv[2]), timeout=10).status)
    except urllib.error.HTTPError as e:
        print(e.code)
    except Exception as e:
        print("error", e)
    """
    return try tool(["python3", "-c", script, url, ca, token ?? ""]).out.trimmingCharacters(in: .whitespacesAndNewlines)
}

extension EndToEnd {
    @Suite(.serialized) struct TLSTests {
        /// Files that are not a certificate and its key are refused before anything starts, each with its rule.
        @Test func badCertificateFilesAreRefusedBeforeTheStart() throws {
            let dir = try TempDir()
            let good = try makeCertificate(dir), other = try makeCertificate(dir, name: "other")
            let junk = try dir.write("junk.pem", "not a certificate\n")
            for (args, said) in [
                (["--tls-cert", good.cert], "--tls-cert and --tls-key go together"),
                (["--tls-cert", dir.file("missing.pem"), "--tls-key", good.key], "cannot be read"),
                (["--tls-cert", junk, "--tls-key", good.key], "holds no PEM certificate"),
                (["--tls-cert", good.cert, "--tls-key", junk], "holds no PEM private key"),
                (["--tls-cert", good.cert, "--tls-key", other.key], "is not the key of --tls-cert"),
            ] {
                let r = try pipcompose(["run", "--size", "320x180", "--control", "127.0.0.1:0", "--duration", "1"] + args)
                #expect(r.status != 0 && r.stderr.contains(said), "\(args): \(r.stderr)")
                #expect(!r.stdout.contains("control "), "it started: \(r.stdout)")
            }
        }

        /// With a certificate the page, the API and WHEP are served over HTTPS only; the watch link's page is a
        /// secure context in Chromium (trusting that certificate as its user would), has Document
        /// Picture-in-Picture, and plays.
        @Test func overHTTPSThePageIsASecureContextAndPlays() throws {
            let dir = try TempDir()
            let tls = try makeCertificate(dir)
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc", "--tls-cert", tls.cert, "--tls-key", tls.key])
            defer { p.signal(SIGINT); _ = p.waitForExit(timeout: 30) }
            let c = try #require(controlURL(p), "\(p.allOutput)")
            #expect(c.hasPrefix("https://127.0.0.1:"), "\(c)")
            let page = try #require(pageURL(p), "\(p.allOutput)")
            #expect(page.hasPrefix("https://"), "\(page)")
            let owner = try ownerToken(c)
            #expect(try httpsGet(c + "/v1/status", ca: tls.cert, token: owner) == "200")
            #expect(try httpsGet(c + "/v1/status", ca: tls.cert, token: nil) == "401")
            #expect(try httpsGet(c + "/v1/status", ca: dir.file("other.pem"), token: owner).hasPrefix("error"),
                    "a client that does not trust the certificate must not get through")
            let plain = try httpsGet(c.replacingOccurrences(of: "https://", with: "http://") + "/v1/status", ca: tls.cert,
                                     token: owner)
            #expect(plain.hasPrefix("error"), "plain HTTP on the HTTPS port: \(plain)")
            let seen = try browserViewer(page, ["--seconds", "2", "--trust-spki", tls.spki])
            #expect(seen["error"] == nil, "\(seen)\n\(p.allOutput)")
            #expect(seen["secureContext"] as? Bool == true && seen["documentPictureInPicture"] as? Bool == true, "\(seen)")
            #expect(((seen["stats"] as? [String: Any])?["readable"] as? Int ?? 0) > 30, "\(seen)")
            #expect(seen["controls"] as? Bool == false, "a watch link's page shows no controls: \(seen)")
        }

        /// `--rtsp rtsps://…`: RTSP over TLS with the same certificate, watch links as the password of `--rtsp-user`.
        /// ffmpeg and GStreamer's rtspsrc decode it; the server presents the certificate it was given; a stranger's
        /// password gets 401, and a plain `rtsp://` client gets nothing.
        @Test func rtspOverTLSPlaysWithAWatchLinksLogin() throws {
            let dir = try TempDir()
            let tls = try makeCertificate(dir)
            let (p, url) = try startLive([try timecodeScene(dir), "--rtsp", "rtsps://127.0.0.1:0/pip", "--rtsp-user",
                                          "viewer", "--tls-cert", tls.cert, "--tls-key", tls.key], rtsp: false)
            defer { p.signal(SIGINT); _ = p.waitForExit(timeout: 30) }
            let u = try #require(url, "\(p.allOutput)")
            #expect(u.hasPrefix("rtsps://127.0.0.1:"), "\(u)")
            let port = try #require(URLComponents(string: u)?.port)
            let line = try #require(p.stdout.first { $0.hasPrefix("rtsp viewers log in as viewer") }, "\(p.allOutput)")
            let token = try #require(line.components(separatedBy: "(w1: ").last?.components(separatedBy: ")").first)
            let login = { (password: String) in "rtsps://viewer:\(password)@127.0.0.1:\(port)/pip" }

            let probe = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=width", "-of", "csv=p=0", login(token)])
            #expect(probe.out.trimmingCharacters(in: .whitespacesAndNewlines) == "640", "\(probe.err)")
            let decoded = try tool(["ffmpeg", "-nostdin", "-v", "error", "-i", login(token), "-frames:v", "30", "-f",
                                    "framemd5", "-"])
            #expect(decoded.status == 0 && decoded.out.split(separator: "\n").filter { $0.hasPrefix("0,") }.count == 30,
                    "\(decoded.err)")
            // identity's eos-after=31 passes 30 decoded pictures and ends the stream on the 31st.
            let gst = try gstLaunchViewer(["rtspsrc", "location=\(login(token))", "tls-validation-flags=0", "!",
                                           "rtph264depay", "!", "h264parse", "!", "avdec_h264", "!", "identity",
                                           "eos-after=31", "!", "fakesink"])
            #expect(gst.played, "\(gst.output)")

            let stranger = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=width", "-of", "csv=p=0",
                                     login(strangerToken(like: token))])
            #expect(stranger.out.isEmpty && stranger.err.contains("401"), "\(stranger.err)")
            let plain = try tool(["ffprobe", "-v", "error", "-timeout", "3000000", "-rtsp_transport", "tcp", "-show_entries",
                                  "stream=width", "-of", "csv=p=0", login(token).replacingOccurrences(of: "rtsps://", with: "rtsp://")])
            #expect(plain.status != 0 && plain.out.isEmpty, "plain RTSP on the TLS port: \(plain.out)")

            // The certificate the server shows is the one it was given.
            let fingerprint = { (command: String) in try tool(["sh", "-c", command]).out.trimmingCharacters(in: .whitespacesAndNewlines) }
            let given = try fingerprint("openssl x509 -in '\(tls.cert)' -noout -fingerprint -sha256")
            let shown = try fingerprint("openssl s_client -connect 127.0.0.1:\(port) </dev/null 2>/dev/null | "
                                        + "openssl x509 -noout -fingerprint -sha256")
            #expect(!given.isEmpty && given == shown, "\(given) vs \(shown)")
        }

        /// `rtsps://` without the certificate files is refused before the start, with what to give.
        @Test func rtspOverTLSNeedsTheCertificate() throws {
            let r = try pipcompose(["run", "--size", "320x180", "--rtsp", "rtsps://127.0.0.1:0/pip", "--duration", "1",
                                    "--control", "127.0.0.1:0"])
            #expect(r.status != 0 && r.stderr.contains("--tls-cert FILE --tls-key FILE"), "\(r.stderr)")
        }
    }
}
