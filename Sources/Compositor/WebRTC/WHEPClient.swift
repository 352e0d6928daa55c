import CGst
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A WHEP viewer's signaling (RFC 9725): a receive-only offer for H.264 and VP8 (and Opus when asked) made by a
/// webrtcbin inside the probe's pipeline, posted to the server with its bearer token, the answer set, and the
/// session ended with `DELETE` on its location. The offer is non-trickle: ICE gathering completes first, so one
/// request carries every candidate, and any WHEP server takes it.
///
/// `@unchecked Sendable`: `location` and `sentOffer`/`answer` are written by `connect` before frames flow and read
/// afterwards behind `lock`; the webrtcbin is kept alive by the reference taken in `init`.
public final class WHEPClient: @unchecked Sendable {
    public struct Options: Sendable {
        /// The bearer token (`--whep-token`, `PIPCOMPOSE_WHEP_TOKEN`); nil sends none.
        public var token: String?
        public var ice = IceSettings()
        /// How long the server may take to answer the offer.
        public var requestTimeout: TimeInterval = 15
        public init(token: String? = nil, ice: IceSettings = IceSettings()) {
            self.token = token
            self.ice = ice
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The endpoint, as http(s) (the `whep+` taken off).
    public let endpoint: URL
    private let options: Options
    private let webrtc: UnsafeMutablePointer<GstElement>
    private let lock = NSLock()
    private var location: URL?
    private var ours: [String] = []
    private var theirs: [String] = []
    private var ended = false

    /// `whep+http://HOST/PATH` or `whep+https://…`: the http(s) URL a WHEP client posts to; nil for another scheme.
    public static func endpoint(of url: String) -> URL? {
        let lower = url.lowercased()
        guard lower.hasPrefix("whep+http://") || lower.hasPrefix("whep+https://") else { return nil }
        return URL(string: String(url.dropFirst("whep+".count)))
    }

    /// Takes its own reference on `webrtc`; adds the receive-only transceivers and sets ICE up. Call before the
    /// pipeline plays.
    init(endpoint: URL, webrtc: UnsafeMutablePointer<GstElement>, sound: Bool, options: Options) throws(Failure) {
        self.endpoint = endpoint
        self.options = options
        self.webrtc = webrtc
        gst_object_ref(UnsafeMutableRawPointer(webrtc))
        let signaling = WebRTCSignaling(name: "whep", webrtc: webrtc)
        signaling.configureICE(options.ice, addresses: [], label: "pipcompose-probe")
        // Payload types as browsers number them; the server answers with those it keeps.
        var media = ["application/x-rtp,media=video,encoding-name=H264,clock-rate=90000,payload=102,"
                     + "packetization-mode=(string)1,profile-level-id=(string)42e01f;"
                     + "application/x-rtp,media=video,encoding-name=VP8,clock-rate=90000,payload=96"]
        if sound { media.append("application/x-rtp,media=audio,encoding-name=OPUS,clock-rate=48000,payload=111,encoding-params=(string)2") }
        for text in media {
            guard let caps = gst_caps_from_string(text) else { throw Failure(description: "cannot make the caps \(text)") }
            defer { gst_caps_unref(caps) }
            guard cgst_webrtc_add_transceiver(webrtc, GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY, caps) != 0 else {
                throw Failure(description: "webrtcbin refused a receive-only transceiver for \(text)")
            }
        }
    }

    deinit {
        gst_object_unref(UnsafeMutableRawPointer(webrtc))
    }

    /// Makes the offer, posts it, sets the answer. Call once the pipeline plays. Throws what the server said when it
    /// said anything but an SDP answer.
    func connect() throws(Failure) {
        let signaling = WebRTCSignaling(name: "whep", webrtc: webrtc)
        let offer: String
        do { offer = try signaling.describeLocally(offering: true, gatherTimeout: 10) } catch {
            throw Failure(description: "cannot make the offer: \(error.message)")
        }
        lock.withLock { ours = IceCandidates.summary(of: offer) }
        var request = URLRequest(url: endpoint, timeoutInterval: options.requestTimeout)
        request.httpMethod = "POST"
        request.setValue("application/sdp", forHTTPHeaderField: "Content-Type")
        request.setValue("application/sdp", forHTTPHeaderField: "Accept")
        if let token = options.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = Data(offer.utf8)
        let (data, response) = try send(request)
        let body = String(decoding: data, as: UTF8.self)
        guard (200...299).contains(response.statusCode) else {
            throw Failure(description: "the WHEP server answered \(response.statusCode)"
                          + Self.excerpt(body).map { ": \($0)" }.orEmpty + Self.hint(for: response.statusCode))
        }
        let type = response.value(forHTTPHeaderField: "Content-Type") ?? "no Content-Type"
        guard body.hasPrefix("v=0") else {
            throw Failure(description: "the WHEP server answered \(response.statusCode) with \(type), not an SDP answer"
                          + Self.excerpt(body).map { ": \($0)" }.orEmpty)
        }
        if let where_ = response.value(forHTTPHeaderField: "Location") {
            lock.withLock { location = URL(string: where_, relativeTo: endpoint)?.absoluteURL }
        }
        lock.withLock { theirs = IceCandidates.summary(of: body) }
        do { try signaling.setRemote(GST_WEBRTC_SDP_TYPE_ANSWER, sdp: body) } catch {
            end()
            throw Failure(description: "the WHEP server's answer was refused: \(error.message)")
        }
    }

    /// ICE's state and the candidates each side offered, for a probe that got no frame: `ICE checking; ours: host
    /// 127.0.0.1:50312 udp; theirs: host 10.0.0.2:40000 udp`.
    public var diagnosis: String {
        let state = WebRTCSignaling(name: "whep", webrtc: webrtc).iceConnectionState
        return lock.withLock {
            "ICE \(state); ours: " + (ours.isEmpty ? "none" : ours.joined(separator: ", "))
                + "; theirs: " + (theirs.isEmpty ? "none in the answer" : theirs.joined(separator: ", "))
        }
    }

    /// Ends the session on the server (`DELETE` on its location), once; a server that does not answer within 3 s
    /// is left to time the session out.
    func end() {
        guard let url = lock.withLock({ () -> URL? in
            defer { ended = true }
            return ended ? nil : location
        }) else { return }
        var request = URLRequest(url: url, timeoutInterval: 3)
        request.httpMethod = "DELETE"
        if let token = options.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        _ = try? send(request)
    }

    private func send(_ request: URLRequest) throws(Failure) -> (Data, HTTPURLResponse) {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<(Data, HTTPURLResponse), Failure>?
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            if let response = response as? HTTPURLResponse {
                result = .success((data ?? Data(), response))
            } else {
                let why = error.map { $0.localizedDescription } ?? "no HTTP answer"
                result = .failure(Failure(description: "cannot reach the WHEP server at \(request.url?.absoluteString ?? ""): \(why)"))
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + request.timeoutInterval + 1) == .timedOut {
            task.cancel()
            throw Failure(description: "the WHEP server at \(request.url?.absoluteString ?? "") did not answer within \(Int(request.timeoutInterval)) s")
        }
        return try result!.get()
    }

    /// The start of a reply's body, on one line, for an error message.
    private static func excerpt(_ body: String) -> String? {
        let line = body.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingCharacters(in: .whitespaces)
        guard !line.isEmpty else { return nil }
        return line.count > 200 ? String(line.prefix(200)) + "…" : line
    }

    private static func hint(for status: Int) -> String {
        switch status {
        case 401, 403: " (give the server's token: --whep-token or PIPCOMPOSE_WHEP_TOKEN)"
        case 404: " (is the path right? pipcompose serves /v1/whep)"
        case 503: " (the server is full or stopping; try again later)"
        default: ""
        }
    }
}

private extension Optional where Wrapped == String {
    var orEmpty: String { self ?? "" }
}
