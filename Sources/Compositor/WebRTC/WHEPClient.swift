import CGst
import Foundation

/// A WHEP viewer (draft-ietf-wish-whep): a receive-only offer for H.264 and VP8 (and Opus when asked) made by a
/// webrtcbin inside the probe's pipeline, posted to the server with its bearer token (`SDPExchange`), the answer
/// set, and the session ended with `DELETE` on its location. The offer is non-trickle by default: ICE gathering
/// completes first, so one request carries every candidate, and any WHEP server takes it. With `trickle` the offer
/// goes out at once and the candidates follow in `PATCH`es (RFC 8840) as ICE finds them, then the end of candidates;
/// a server that takes none (405, 501) is sent no more, and finds ours from our connectivity checks.
///
/// `@unchecked Sendable`: both sides' candidates are behind `lock` (the session keeps its own); the webrtcbin is kept
/// alive by the reference taken in `init`.
public final class WHEPClient: @unchecked Sendable {
    public struct Options: Sendable {
        /// The bearer token (`--whep-token`, `PIPCOMPOSE_WHEP_TOKEN`); nil sends none.
        public var token: String?
        public var ice = IceSettings()
        /// How long the server may take to answer the offer.
        public var requestTimeout: TimeInterval = 15
        /// Send the offer before ICE gathering completes, and the candidates after it (`--whep-trickle`).
        public var trickle = false
        public init(token: String? = nil, ice: IceSettings = IceSettings()) {
            self.token = token
            self.ice = ice
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let session: SDPSession
    private let webrtc: UnsafeMutablePointer<GstElement>
    private let lock = NSLock()
    private var ours: [String] = []
    private var theirs: [String] = []
    private let trickles: Bool
    /// How the trickled candidates went: sent, and the server's last word on them.
    private var trickled = 0
    private var trickleAnswer: String?

    /// `whep+http://HOST/PATH` or `whep+https://…`: the http(s) URL a WHEP client posts to; nil for another scheme.
    public static func endpoint(of url: String) -> URL? { SDPExchange.endpoint(of: url, prefix: "whep") }

    /// Takes its own reference on `webrtc`; adds the receive-only transceivers and sets ICE up. Call before the
    /// pipeline plays.
    init(endpoint: URL, webrtc: UnsafeMutablePointer<GstElement>, sound: Bool, options: Options) throws(Failure) {
        session = SDPSession(SDPExchange(kind: "WHEP", endpoint: endpoint, token: options.token, timeout: options.requestTimeout))
        self.webrtc = webrtc
        trickles = options.trickle
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
        // Trickling: every candidate webrtcbin finds from the offer on, until gathering completes.
        let found = FoundCandidates()
        var handlers: [gulong] = []
        if trickles {
            handlers.append(Signals.connectIndexedText(UnsafeMutableRawPointer(webrtc), "on-ice-candidate") { index, line in
                found.add(Int(index), line)
            })
            handlers.append(Signals.connect(UnsafeMutableRawPointer(webrtc), "notify::ice-gathering-state") { [webrtc] _, _ in
                if WebRTCSignaling(name: "whep", webrtc: webrtc).gatheringComplete { found.finish() }
            })
        }
        defer { for h in handlers { g_signal_handler_disconnect(UnsafeMutableRawPointer(webrtc), h) } }
        let offer: String
        do { offer = try signaling.describeLocally(offering: true, gatherTimeout: trickles ? nil : 10) } catch {
            throw Failure(description: "cannot make the offer: \(error.message)")
        }
        if trickles && signaling.gatheringComplete { found.finish() }
        lock.withLock { ours = IceCandidates.summary(of: offer) }
        let answer: String
        do { answer = try session.open(offer: offer) } catch { throw Failure(description: error.description) }
        lock.withLock { theirs = IceCandidates.summary(of: answer) }
        do { try signaling.setRemote(GST_WEBRTC_SDP_TYPE_ANSWER, sdp: answer) } catch {
            end()
            throw Failure(description: "the WHEP server's answer was refused: \(error.message)")
        }
        if trickles { trickle(found, offer: offer) }
    }

    /// Sends the candidates found since the offer as they come (those not in it already), then the end of
    /// candidates, until gathering completes (at most 10 s); stops at a server that takes none.
    private func trickle(_ found: FoundCandidates, offer: String) {
        let (sections, ufrag, pwd) = TrickleFragment.sections(of: offer)
        let deadline = Date().addingTimeInterval(10)
        var done = false
        while !done {
            let (batch, complete) = found.next(until: deadline)
            done = complete || Date() >= deadline
            let fresh = batch.filter { !offer.contains($0.line) && $0.index < sections.count }
            guard !fresh.isEmpty || complete else {
                if done { return }
                continue
            }
            let fragment = TrickleFragment(ufrag: ufrag, pwd: pwd, candidates: fresh.map {
                TrickleFragment.Candidate(mid: sections[$0.index].mid, index: $0.index, line: $0.line)
            }, ended: complete)
            let answer: (status: Int, message: String)
            do { answer = try session.trickle(fragment.text(sections: sections)) } catch {
                lock.withLock { trickleAnswer = "\(error)" }
                return
            }
            lock.withLock {
                ours += IceCandidates.summary(of: fresh.map { "a=" + $0.line }.joined(separator: "\n"))
                if (200...299).contains(answer.status) { trickled += fresh.count }
                trickleAnswer = "\(answer.status)" + (answer.message.isEmpty ? "" : " \(answer.message)")
            }
            // A server that takes no trickle (405, 501, or any refusal) is sent no more.
            guard (200...299).contains(answer.status) else { return }
        }
    }

    /// ICE's state and the candidates each side offered, for a probe that got no frame: `ICE checking; ours: host
    /// 127.0.0.1:50312 udp; theirs: host 10.0.0.2:40000 udp`.
    public var diagnosis: String {
        let state = WebRTCSignaling(name: "whep", webrtc: webrtc).iceConnectionState
        return lock.withLock {
            "ICE \(state); ours: " + (ours.isEmpty ? "none" : ours.joined(separator: ", "))
                + "; theirs: " + (theirs.isEmpty ? "none in the answer" : theirs.joined(separator: ", "))
                + (trickles ? "; trickled \(trickled), the server's last answer: \(trickleAnswer ?? "none")" : "")
        }
    }

    /// Ends the session on the server (`DELETE` on its location), once.
    func end() { session.end() }
}

/// Candidates webrtcbin found (its `on-ice-candidate`), handed to the thread that trickles them.
///
/// `@unchecked Sendable`: everything is behind `condition`.
private final class FoundCandidates: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [(index: Int, line: String)] = []
    private var complete = false

    func add(_ index: Int, _ line: String) {
        condition.withLock {
            waiting.append((index, line))
            condition.broadcast()
        }
    }

    func finish() {
        condition.withLock {
            complete = true
            condition.broadcast()
        }
    }

    /// The candidates found since the last call (waiting for one until `deadline`), and whether gathering completed.
    func next(until deadline: Date) -> (batch: [(index: Int, line: String)], complete: Bool) {
        condition.withLock {
            while waiting.isEmpty && !complete && condition.wait(until: deadline) {}
            defer { waiting = [] }
            return (waiting, complete)
        }
    }
}
