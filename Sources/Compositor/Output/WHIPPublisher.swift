import CGst
import Foundation

/// The WHIP session (RFC 9725) of one run of a `--push whip+http(s)://…` pipeline (pipelines/push-whip.pipeline):
/// the send-only offer of its webrtcbin ("whip") posted with the bearer token once the first packet has reached it
/// (webrtcbin describes a stream from the caps on its pads), the answer set, and `DELETE` at the end.
///
/// Whatever goes wrong (the server refuses or is down, ICE fails, nothing connects in time, the server goes silent)
/// is posted as the webrtcbin's error on the pipeline's bus: the push then fails alone and is retried with backoff
/// as every push is, with a new pipeline and a new session.
///
/// `@unchecked Sendable`: `connected` is behind `lock` (the session keeps its own); the webrtcbin is kept alive by the
/// reference taken in `init`, and signaling runs on `queue`.
final class WHIPPublisher: @unchecked Sendable {
    /// How long after the answer ICE and DTLS may take before the push is failed.
    static let connectTimeout: TimeInterval = 10

    private let session: SDPSession
    private let webrtc: UnsafeMutablePointer<GstElement>
    private let queue = DispatchQueue(label: "pipcompose.whip")
    private let lock = NSLock()
    private var connected = false
    private let onConnected: @Sendable () -> Void

    /// `whip+http://HOST/PATH` or `whip+https://…`: the URL a WHIP client posts to; nil for another scheme.
    static func endpoint(of url: String) -> URL? { SDPExchange.endpoint(of: url, prefix: "whip") }

    /// Sets the pipeline's webrtcbin up to send only, with `ice`; the offer goes out once the first packet leaves
    /// "video_rtp". Call before the pipeline plays. `onConnected` runs when the connection is up (ask for a key frame).
    init(in pipeline: Pipeline, url: String, token: String?, ice: IceSettings,
         onConnected: @escaping @Sendable () -> Void) throws(GstError) {
        guard let endpoint = Self.endpoint(of: url) else {
            throw GstError(element: "whip", message: "'\(url)' is not a whip+http:// or whip+https:// URL")
        }
        guard let webrtc = pipeline.element(named: "whip") else {
            throw GstError(element: "whip", message: "the WHIP pipeline needs 'webrtcbin name=whip'")
        }
        self.webrtc = webrtc
        self.onConnected = onConnected
        session = SDPSession(SDPExchange(kind: "WHIP", endpoint: endpoint, token: token, timeout: 10))
        cgst_webrtc_set_directions(webrtc, GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY)
        WebRTCSignaling(name: "whip", webrtc: webrtc).configureICE(ice, addresses: [], label: "pipcompose-whip")
        WebRTCSignaling(name: "whip", webrtc: webrtc).reportCaptureTimes()
        Signals.connect(UnsafeMutableRawPointer(webrtc), "notify::connection-state") { [weak self] _, _ in
            self?.connectionChanged()
        }
        // A server that stops answering (its RTCP receiver reports stop): rtpbin times its receiver out.
        if let rtpbin = gst_bin_get_by_name(cgst_bin(webrtc), "rtpbin") {
            Signals.connect(UnsafeMutableRawPointer(rtpbin), "on-timeout", twoIntegers: { [weak self] in
                self?.failed("the WHIP server went silent (no RTCP receiver reports)")
            })
            gst_object_unref(UnsafeMutableRawPointer(rtpbin))
        }
        guard pipeline.onFirstBuffer(leaving: "video_rtp", { [weak self] in
            guard let self else { return }
            self.queue.async { [weak self] in self?.negotiate() }
        }) else {
            // Thrown with every field set: deinit runs and lets go of the webrtcbin.
            throw GstError(element: "whip", message: "the WHIP pipeline needs the picture's RTP caps named 'video_rtp'")
        }
    }

    deinit {
        gst_object_unref(UnsafeMutableRawPointer(webrtc))
    }

    private func negotiate() {
        guard !session.isEnded else { return }
        let signaling = WebRTCSignaling(name: "whip", webrtc: webrtc)
        do {
            let offer = try signaling.describeLocally(offering: true, gatherTimeout: 10)
            let answer: String
            do { answer = try session.open(offer: offer) } catch { return failed(error.description) }
            try signaling.setRemote(GST_WEBRTC_SDP_TYPE_ANSWER, sdp: answer)
        } catch {
            return failed(error.message)
        }
        queue.asyncAfter(deadline: .now() + Self.connectTimeout) { [weak self] in
            guard let self, !self.session.isEnded, !self.lock.withLock({ self.connected }) else { return }
            self.failed("never connected within \(Int(Self.connectTimeout)) s (ICE or DTLS; "
                        + WebRTCSignaling(name: "whip", webrtc: self.webrtc).iceConnectionState + ")")
        }
    }

    private func connectionChanged() {
        let state = WebRTCSignaling(name: "whip", webrtc: webrtc).connectionState
        switch state {
        case "connected":
            let first = lock.withLock { () -> Bool in
                defer { connected = true }
                return !connected
            }
            if first { onConnected() }
        case "failed": failed("the WebRTC connection to the WHIP server failed")
        default: break
        }
    }

    /// The push fails with `message` (once; never after `end`).
    private func failed(_ message: String) {
        guard !session.isEnded else { return }
        cgst_element_post_error(webrtc, message)
    }

    /// Ends the session on the server (`DELETE` on its location), once; nothing is posted after this.
    func end() { session.end() }
}
