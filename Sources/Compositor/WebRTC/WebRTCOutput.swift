import Foundation

/// Browsers as viewers (WHEP): the live encoder's H.264, encoded once, fanned out in one pipeline
/// (`pipelines/webrtc.pipeline`: appsrc → tee) to one webrtcbin per viewer (`pipelines/webrtc-viewer.pipeline`).
/// A browser that offers no H.264 gets VP8 (`pipelines/webrtc-vp8.pipeline`: the stream decoded and encoded again,
/// behind a valve that is open only while VP8 viewers watch, so it costs nothing otherwise). With sound, a browser
/// that offers to receive audio gets the track as Opus, on the same clock as the picture.
///
/// A viewer joins with `POST /v1/whep` (an SDP offer; the answer carries every ICE candidate, no trickle) and
/// leaves with `DELETE` on its location, by ICE or DTLS failing, by its RTCP going silent (a tab closed without a
/// word: webrtcbin's ICE alone never notices), or by never connecting within `connectTimeout`. Each viewer's queue is
/// leaky: a slow one loses frames (and asks for a key frame), never holds the others or grows memory. A viewer's
/// key-frame requests (PLI/FIR) reach the encoder through `requestKeyFrameForViewer`, spaced and shared as for RTSP.
///
/// `@unchecked Sendable`: viewers and counters are behind `lock`; GStreamer work on viewers runs on `queue`;
/// `source` and `frameClockBase` are set once before the first frame.
public final class WebRTCOutput: @unchecked Sendable {
    public struct Counts: Sendable, Equatable {
        public var joined = 0
        public var left = 0
        /// Answered, but ICE/DTLS never connected within the timeout.
        public var timedOut = 0
        /// Refused: over the limit.
        public var refused = 0
    }

    public enum Failure: Error, CustomStringConvertible {
        case badOffer(String)
        case full(Int)
        case unknown(String)
        case failed(String)
        case stopping

        public var description: String {
            switch self {
            case .badOffer(let s): s
            case .full(let n): "this stream already has its \(n) WebRTC viewers (--webrtc-max-viewers); try again later"
            case .unknown(let id): "no WebRTC session '\(id)' (it ended, or was never made)"
            case .failed(let s): s
            case .stopping: "pipcompose is stopping"
            }
        }
    }

    private struct Viewer {
        let peer: WebRTCPeer
        let joined: Double
        let vp8: Bool
        var connected = false
    }

    public let id = "webrtc"
    /// Viewers whose browsers offer to receive audio hear the session's sound (Opus).
    public let carriesAudio: Bool
    public let maxViewers: Int
    public let connectTimeout: TimeInterval
    private let pipeline: Pipeline
    private let input: AppSource
    /// The sound's appsrc (Opus packets), when the session has sound.
    private let audioInput: AppSource?
    private var audioCaps: MediaCaps?
    private let viewerTemplate: PipelineTemplate
    private let vp8ViewerTemplate: PipelineTemplate?
    private let addresses: [String]
    private let onEvent: @Sendable (SessionEvent) -> Void
    private let queue = DispatchQueue(label: "webrtc-signaling")
    private let lock = NSLock()
    private var viewers: [String: Viewer] = [:]
    /// Offers being answered: they count against the limit until they join or fail.
    private var pending = 0
    private var stopped = false
    private var nextNumber = 1
    private var gate = StreamGate()
    private var counts = Counts()
    private var _delivered: UInt64 = 0
    private var _bytes: UInt64 = 0
    /// The live encoder (key frames for joining viewers); set by the session.
    public var source: Encoder?

    /// - Parameters:
    ///   - addresses: the local addresses ICE offers (loopback and where the control API listens); empty: all.
    ///   - vp8: the VP8 branch and its viewers' template with the branch's values (bitrate, key-frame distance);
    ///     nil: H.264 viewers only.
    public init(template: PipelineTemplate, viewerTemplate: PipelineTemplate,
                vp8: (branch: PipelineTemplate, viewer: PipelineTemplate, values: [String: String])? = nil,
                audio: Bool = false, addresses: [String], maxViewers: Int, connectTimeout: TimeInterval = 15,
                frameClockBase: @escaping @Sendable () -> MediaTime?,
                onEvent: @escaping @Sendable (SessionEvent) -> Void) throws {
        self.viewerTemplate = viewerTemplate
        vp8ViewerTemplate = vp8?.viewer
        self.addresses = addresses
        self.maxViewers = maxViewers
        self.connectTimeout = connectTimeout
        self.onEvent = onEvent
        carriesAudio = audio && template.hasAudio && viewerTemplate.hasAudio
        pipeline = try Pipeline(name: "webrtc", launch: try Self.launch(template: template, vp8: vp8, audio: carriesAudio))
        guard let input = pipeline.appSource(named: "in", maxBuffers: 8) else {
            pipeline.stop(drain: false)
            throw GstError(element: "webrtc", message: "\(template.path) needs 'appsrc name=in' and 'tee name=fan'")
        }
        self.input = input
        input.mapTimestamps(frameClockBase: frameClockBase)
        audioInput = carriesAudio ? pipeline.appSource(named: "audio", maxBuffers: 16) : nil
        audioInput?.mapTimestamps(exact: true, frameClockBase: frameClockBase)
    }

    /// The fan-out, with the VP8 branch hung on its tee when there is one.
    public static func launch(template: PipelineTemplate,
                              vp8: (branch: PipelineTemplate, viewer: PipelineTemplate, values: [String: String])?,
                              audio: Bool = false) throws -> String {
        let fan = try template.render([:], audio: audio)
        guard let vp8 else { return fan }
        return fan + "  fan. ! " + (try vp8.branch.render(vp8.values))
    }

    public func start() throws {
        try pipeline.play { [weak self] event in
            // A viewer's error (its path names its bin) ends that viewer only.
            guard let self, case .error(let e) = event else { return }
            let owner = lock.withLock { viewers.keys.first { e.path?.contains("/GstBin:\($0)/") == true || e.path?.hasSuffix("/GstBin:\($0)") == true } }
            if let owner {
                queue.async { [weak self] in self?.drop(owner, reason: "failed: \(e.message)") }
            } else {
                // The shared part (the fan-out, the VP8 branch): said, never swallowed.
                onEvent(.outputFailed(output: id, reason: "\(e.element): \(e.message)"))
            }
        }
    }

    public var viewerCount: Int { lock.withLock { viewers.count } }
    /// Viewers taking VP8 (their browsers offered no H.264).
    public var vp8Count: Int { lock.withLock { viewers.values.filter(\.vp8).count } }
    public var connectedCount: Int { lock.withLock { viewers.values.filter(\.connected).count } }
    public var totals: Counts { lock.withLock { counts } }
    public var delivered: UInt64 { lock.withLock { _delivered } }
    public var bytes: UInt64 { lock.withLock { _bytes } }
    public var dropped: UInt64 { input.dropped }

    /// Answers a WHEP offer: returns the session id and the SDP answer. Throws `.badOffer` (nothing we can send, or
    /// not SDP), `.full` over the limit, `.failed` when GStreamer could not answer.
    public func answer(offer: String) async throws -> (id: String, sdp: String) {
        let parsed: SDPOffer, choice: SDPOffer.Choice
        do {
            parsed = try SDPOffer.parse(offer)
            choice = try parsed.choice()
        } catch { throw Failure.badOffer(error.description) }
        if case .vp8 = choice, vp8ViewerTemplate == nil {
            throw Failure.badOffer("the offer has no H.264 (packetization-mode=1) and VP8 is not installed here (gstreamer1.0-plugins-good's vp8enc)")
        }
        let id: String = try lock.withLock {
            guard !stopped else { throw Failure.stopping }
            guard viewers.count + pending < maxViewers else {
                counts.refused += 1
                throw Failure.full(maxViewers)
            }
            pending += 1
            defer { nextNumber += 1 }
            return "viewer\(nextNumber)"
        }
        return try await withCheckedThrowingContinuation { done in
            queue.async { [self] in
                do {
                    let isVP8: Bool
                    if case .vp8 = choice { isVP8 = true } else { isVP8 = false }
                    let template = isVP8 ? vp8ViewerTemplate! : viewerTemplate
                    // The sound too, when there is some and the browser offered to receive Opus.
                    let opus = carriesAudio ? parsed.opus : nil
                    let launch = try template.render(["pt": String(choice.payloadType),
                                                      "audio_pt": String(opus?.payloadType ?? 111)], audio: opus != nil)
                    var feeds = [(element: "video", tee: isVP8 ? "vp8fan" : "fan")]
                    if opus != nil { feeds.append((element: "sound", tee: "audiofan")) }
                    // The first VP8 viewer opens the transcoding branch (and asks for a key frame to start from).
                    if isVP8 { vp8Viewers(changedBy: 1) }
                    let peer: WebRTCPeer
                    let sdp: String
                    do {
                        peer = try WebRTCPeer(in: pipeline, name: id, launch: launch, feeds: feeds, addresses: addresses)
                        do { sdp = try peer.answer(offer: offer, gatherTimeout: 5) } catch {
                            peer.remove()
                            throw error
                        }
                    } catch {
                        if isVP8 { vp8Viewers(changedBy: -1) }
                        throw error
                    }
                    let now = ProcessInfo.processInfo.systemUptime
                    let count = lock.withLock { () -> Int in
                        pending -= 1
                        viewers[id] = Viewer(peer: peer, joined: now, vp8: isVP8)
                        counts.joined += 1
                        return viewers.count
                    }
                    watch(peer, id: id, vp8: isVP8)
                    onEvent(.viewerJoined(.webrtc(session: id, viewers: count, codec: isVP8 ? "VP8" : "H264",
                                                  sound: opus != nil ? "opus" : "none")))
                    done.resume(returning: (id, sdp))
                } catch let e as GstError {
                    lock.withLock { pending -= 1 }
                    // webrtcbin refusing the offer itself (no ICE credentials, no fingerprint) is the offer's fault.
                    if e.message.hasPrefix("set-remote-description") || e.message.hasPrefix("the offer is not SDP") {
                        done.resume(throwing: Failure.badOffer("the offer was refused: \(e.message)"))
                    } else {
                        done.resume(throwing: Failure.failed("cannot answer the offer: \(e.message)"))
                    }
                } catch {
                    lock.withLock { pending -= 1 }
                    done.resume(throwing: Failure.failed("cannot answer the offer: \(error)"))
                }
            }
        }
    }

    /// Ends a session (`DELETE` on its location).
    public func end(_ id: String) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            queue.async { [self] in
                guard lock.withLock({ viewers[id] != nil }) else { return done.resume(throwing: Failure.unknown(id)) }
                drop(id, reason: "ended by the viewer")
                done.resume()
            }
        }
    }

    /// Connection changes, RTCP silence, key-frame requests, and the timeout for never connecting.
    private func watch(_ peer: WebRTCPeer, id: String, vp8: Bool) {
        peer.onConnectionState { [weak self] state in
            guard let self else { return }
            switch state {
            case "connected":
                let first = lock.withLock { () -> Bool in
                    guard var v = viewers[id], !v.connected else { return false }
                    v.connected = true
                    viewers[id] = v
                    return true
                }
                if first {
                    source?.requestKeyFrameForViewer()
                    onEvent(.viewerConnected(session: id))
                }
            case "failed", "closed":
                queue.async { [weak self] in self?.drop(id, reason: "connection \(state)") }
            default: break
            }
        }
        peer.onReceiverTimeout { [weak self] in
            self?.queue.async { [weak self] in self?.drop(id, reason: "the viewer went silent (no RTCP)") }
        }
        // A VP8 viewer's requests go up to vp8enc inside this pipeline; an H.264 viewer's to the live encoder.
        if !vp8 { peer.onKeyFrameRequest { [weak self] in self?.source?.requestKeyFrameForViewer() } }
        queue.asyncAfter(deadline: .now() + connectTimeout) { [weak self] in
            guard let self else { return }
            let never = lock.withLock { viewers[id].map { !$0.connected } ?? false }
            if never {
                lock.withLock { counts.timedOut += 1 }
                drop(id, reason: "never connected within \(Int(connectTimeout)) s (ICE or DTLS)")
            }
        }
    }

    /// On `queue`: takes the viewer out of the pipeline.
    private func drop(_ id: String, reason: String) {
        guard let v = lock.withLock({ viewers.removeValue(forKey: id) }) else { return }
        v.peer.remove()
        if v.vp8 { vp8Viewers(changedBy: -1) }
        let count = lock.withLock { () -> Int in
            counts.left += 1
            return viewers.count
        }
        onEvent(.viewerLeft(.webrtc(session: id, viewers: count, reason: reason)))
    }

    private var vp8Watching = 0

    /// On `queue`: opens the VP8 branch's valve for the first VP8 viewer (with a key frame to start decoding from),
    /// closes it after the last.
    private func vp8Viewers(changedBy delta: Int) {
        let before = vp8Watching
        vp8Watching = max(0, vp8Watching + delta)
        if before == 0 && vp8Watching > 0 {
            pipeline.set("drop", "false", onElementNamed: "vp8gate")
            source?.requestKeyFrameForViewer()
            onEvent(.vp8Started(viewers: vp8Watching))
        } else if before > 0 && vp8Watching == 0 {
            pipeline.set("drop", "true", onElementNamed: "vp8gate")
            onEvent(.vp8Stopped)
        }
    }

    /// Called on the encoder's streaming thread: from the first key frame on, every frame goes to the tee.
    public func deliver(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        lock.lock()
        defer { lock.unlock() }
        guard gate.admit(buffer) else { return }
        gate.pass(caps, to: input)
        _ = input.push(buffer.shallowCopy())
        _delivered += 1
        _bytes += UInt64(buffer.size)
    }

    /// Called on the Opus encoder's streaming thread: every packet goes to the sound's tee, stamped on the frame
    /// clock like the picture (the browser lines the two up by RTCP sender reports).
    public func deliverAudio(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        guard let audioInput else { return }
        lock.lock()
        defer { lock.unlock() }
        if let caps, audioCaps == nil || audioCaps! != caps {
            audioInput.setCaps(caps)
            audioCaps = caps
        }
        _ = audioInput.push(buffer.shallowCopy())
    }

    /// Ends every session and the pipeline.
    public func stop() {
        lock.withLock { stopped = true }
        queue.sync {
            for id in lock.withLock({ Array(viewers.keys) }) { drop(id, reason: "pipcompose stopped") }
        }
        input.endOfStream()
        audioInput?.endOfStream()
        pipeline.stop(drain: false)
    }
}

extension WebRTCOutput: Output {
    public var stateText: String { "serving \(viewerCount) WebRTC viewer(s)" }
    public func open() throws { try start() }

    public func feed(from encoder: Encoder) {
        source = encoder
        encoder.subscribe(self, watching: { [weak self] in (self?.viewerCount ?? 0) > 0 }) { [weak self] b, c in self?.deliver(b, c) }
    }

    /// Browsers hear Opus, encoded once for all of them.
    public func hear(_ track: AudioTrack) {
        guard carriesAudio else { return }
        track.subscribe(self, codec: .opus) { [weak self] b, c in self?.deliverAudio(b, c) }
    }

    public func finish(timeout: TimeInterval) -> OutputEnding {
        stop()
        return .finalized
    }
}
