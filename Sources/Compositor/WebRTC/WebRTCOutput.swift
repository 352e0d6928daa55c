import Foundation

/// Browsers as viewers (WHEP): each picture's H.264, encoded once, handed to one webrtcbin per viewer in one
/// pipeline (`pipelines/webrtc.pipeline`; a viewer's bin is `pipelines/webrtc-viewer.pipeline`, with its own appsrc).
/// A viewer sees the main picture or a rendition (`show`), and moves from one to another at a key frame of the new
/// one: it gets the old picture until then, so the switch leaves no gap. A browser that offers no H.264 gets VP8
/// (`pipelines/webrtc-vp8.pipeline`: the main picture decoded and encoded again, behind a valve that is open only
/// while VP8 viewers watch, so it costs nothing otherwise). With sound, a browser that offers to receive audio gets
/// the track as Opus, on the same clock as the picture.
///
/// A viewer joins with `POST /v1/whep` (an SDP offer; the answer carries every ICE candidate, no trickle) and
/// leaves with `DELETE` on its location, by ICE or DTLS failing, by its RTCP going silent (a tab closed without a
/// word: webrtcbin's ICE alone never notices), or by never connecting within `connectTimeout`. Each viewer's input is
/// bounded: a slow one loses frames by whole groups of pictures (`GroupDrop`) and asks for a key frame, never holds the
/// others or grows memory (before it connects, its input keeps the newest frames). A viewer's key-frame requests
/// (PLI/FIR) reach its picture's encoder through `requestKeyFrameForViewer`, spaced and shared as for RTSP.
///
/// `@unchecked Sendable`: viewers and counters are behind `lock`; GStreamer work on viewers runs on `queue`;
/// `source` and `frameClockBase` are set once before the first frame.
///
/// One concern in one file, longer than 420 lines on purpose: joining, switching pictures, delivering and leaving
/// all change the one viewer table and its bins on the one fan-out pipeline, under one lock and one queue.
public final class WebRTCOutput: @unchecked Sendable {
    public struct Counts: Sendable, Equatable {
        public var joined = 0
        public var left = 0
        /// Answered, but ICE/DTLS never connected within the timeout.
        public var timedOut = 0
        /// Refused: over the limit.
        public var refused = 0
        /// Candidates the sessions trickled after their offers (`PATCH`), those that left included.
        public var trickled = 0
    }

    public enum Failure: Error, CustomStringConvertible {
        case badOffer(String)
        case full(Int)
        case unknown(String)
        case failed(String)
        case stopping
        /// Trickled candidates that cannot be taken (an ICE restart, a media section the offer did not have).
        case refusedCandidates(String)

        public var description: String {
            switch self {
            case .badOffer(let s): s
            case .full(let n): "this stream already has its \(n) WebRTC viewers (--webrtc-max-viewers); try again later"
            case .unknown(let id): "no WebRTC session '\(id)' (it ended, or was never made)"
            case .failed(let s): s
            case .stopping: "pipcompose is stopping"
            case .refusedCandidates(let s): s
            }
        }
    }

    private struct Viewer {
        let peer: WebRTCPeer
        let joined: Double
        let vp8: Bool
        /// Its own input (H.264 viewers; VP8 ones hang on the VP8 branch's tee).
        let input: AppSource?
        var gate = StreamGate()
        /// Frames its input left out when full, by whole groups of pictures.
        var overflow = GroupDrop()
        /// Every frame its input lost.
        var lost: UInt64 { (input?.dropped ?? 0) + overflow.skipped }
        var connected = false
        /// The picture it sees: nil the main one, else a rendition's size.
        var picture: PixelSize?
        /// The picture it moves to at that picture's next key frame, while it waits for one.
        var next: PixelSize??
        /// While it waits: the newest frame of its picture, held back one frame so that the key frame of the new
        /// picture, drawn at the same moment, replaces it rather than following it with the same time.
        var held: (buffer: MediaBuffer, caps: MediaCaps?)?
        /// The time of the last frame it was given: frames go out in time order, never two with one time.
        var last: MediaTime?
        /// The candidates of each side (`host 10.0.0.2:51234 udp`): what a session that fails ICE says it tried.
        var ours: [String] = []
        var theirs: [String] = []
        /// Its offer's media sections (their `a=mid`) and ICE username fragment: where trickled candidates go.
        var mids: [String?] = []
        var ufrag: String?
        /// Candidates it trickled after its offer (`PATCH`).
        var trickled = 0
    }

    /// A viewer as `status` shows it.
    public struct ViewerState: Sendable, Equatable {
        public var id: String
        public var codec: String
        public var connected: Bool
        /// nil: the main picture.
        public var picture: PixelSize?
        /// Set while it waits for a key frame of the picture it asked for.
        public var switchingTo: PixelSize??
        /// Frames its own input lost (it could not keep up, or had not connected yet), by whole groups of pictures.
        public var dropped: UInt64
        /// Candidates it trickled after its offer.
        public var trickled = 0
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
    private let ice: IceSettings
    private let onEvent: @Sendable (SessionEvent) -> Void
    private let queue = DispatchQueue(label: "webrtc-signaling")
    private let lock = NSLock()
    private var viewers: [String: Viewer] = [:]
    /// Offers being answered: they count against the limit until they join or fail.
    private var pending = 0
    private var stopped = false
    private var nextNumber = 1
    private var gate = StreamGate()
    /// The renditions viewers may see, by size, each with its encoder.
    private var pictures: [PixelSize: Encoder] = [:]
    private let frameClockBase: @Sendable () -> MediaTime?
    /// Frames dropped at the inputs of viewers that have left.
    private var leftDropped: UInt64 = 0
    /// Whether VP8 viewers watch: the VP8 branch is fed only then.
    private var vp8Open = false
    /// Called (on the signaling queue) when no viewer sees or waits for rendition `size` any more.
    public var onPictureUnused: (@Sendable (PixelSize) -> Void)?
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
                audio: Bool = false, addresses: [String], ice: IceSettings = IceSettings(), maxViewers: Int,
                connectTimeout: TimeInterval = 15, frameClockBase: @escaping @Sendable () -> MediaTime?,
                onEvent: @escaping @Sendable (SessionEvent) -> Void) throws {
        self.viewerTemplate = viewerTemplate
        vp8ViewerTemplate = vp8?.viewer
        self.addresses = addresses
        self.ice = ice
        self.maxViewers = maxViewers
        self.connectTimeout = connectTimeout
        self.onEvent = onEvent
        carriesAudio = audio && template.hasAudio && viewerTemplate.hasAudio
        self.frameClockBase = frameClockBase
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
    /// Frames the shared part lost (the VP8 branch's input). What a viewer's own input drops, as a viewer that
    /// cannot keep up (or has not connected yet) does, is that viewer's: `viewerStates` and `viewerDropped`.
    public var dropped: UInt64 { input.dropped }
    /// Frames the viewers' own inputs dropped, those that left included.
    public var viewerDropped: UInt64 {
        lock.withLock { leftDropped + viewers.values.reduce(0) { $0 + $1.lost } }
    }

    /// Each viewer and the picture it sees, in the order they joined.
    public var viewerStates: [ViewerState] {
        lock.withLock {
            viewers.sorted { $0.value.joined < $1.value.joined }.map {
                ViewerState(id: $0.key, codec: $0.value.vp8 ? "VP8" : "H264", connected: $0.value.connected,
                            picture: $0.value.picture, switchingTo: $0.value.next, dropped: $0.value.lost,
                            trickled: $0.value.trickled)
            }
        }
    }

    /// Whether a viewer sees the main picture or waits to (VP8 viewers always see it).
    public var watchesMain: Bool {
        lock.withLock { viewers.values.contains { $0.picture == nil || $0.next.map { $0 == nil } == true } }
    }

    /// The renditions viewers see or wait for.
    public var watchedRenditions: Set<PixelSize> {
        lock.withLock {
            var sizes = Set<PixelSize>()
            for v in viewers.values {
                if let p = v.picture { sizes.insert(p) }
                if let n = v.next, let p = n { sizes.insert(p) }
            }
            return sizes
        }
    }

    /// The renditions the other viewers than `id` want: the one each waits for, or else the one it sees.
    public func renditionsWanted(besides id: String) -> Set<PixelSize> {
        lock.withLock {
            Set(viewers.filter { $0.key != id }.values.compactMap { v -> PixelSize? in v.next ?? v.picture })
        }
    }

    /// Lets viewers see rendition `size`, encoded by `encoder` (until `withdraw`).
    public func offer(_ size: PixelSize, from encoder: Encoder) {
        lock.withLock { pictures[size] = encoder }
        encoder.subscribe(self, requestKeyFrame: false, watching: { [weak self] in
            self?.watchedRenditions.contains(size) ?? false
        }) { [weak self] b, c in self?.deliver(b, c, picture: size) }
    }

    /// Takes rendition `size` away; a viewer still on it, or waiting for it, goes back to the main picture.
    public func withdraw(_ size: PixelSize) {
        guard let encoder = lock.withLock({ pictures.removeValue(forKey: size) }) else { return }
        encoder.unsubscribe(self)
        let moved = lock.withLock { () -> [String] in
            var ids: [String] = []
            for (id, v) in viewers where v.picture == size || v.next.map({ $0 == size }) == true {
                viewers[id]?.next = .some(nil)
                ids.append(id)
            }
            return ids
        }
        if !moved.isEmpty { source?.requestKeyFrameForViewer() }
    }

    /// The renditions offered now.
    public var offered: Set<PixelSize> { lock.withLock { Set(pictures.keys) } }

    /// Shows viewer `id` picture `picture` (nil: the main one) from that picture's next key frame on; it sees what it
    /// saw until then. Returns at once.
    public func show(_ picture: PixelSize?, to id: String) throws(Failure) {
        lock.lock()
        let encoder: Encoder?
        do {
            defer { lock.unlock() }
            guard let v = viewers[id] else { throw Failure.unknown(id) }
            guard !v.vp8 else {
                throw Failure.failed("\(id) takes VP8 (its browser offered no H.264), made from the main picture only: it "
                              + "cannot see a rendition; use a browser with H.264, or resize the main picture")
            }
            if v.picture == picture {
                viewers[id]?.next = nil
                encoder = nil
            } else if let picture {
                guard let e = pictures[picture] else { throw Failure.failed("there is no rendition \(picture) to show") }
                viewers[id]?.next = .some(picture)
                encoder = e
            } else {
                viewers[id]?.next = .some(nil)
                encoder = source
            }
        }
        // Its first key frame is the switch.
        encoder?.requestKeyFrameForViewer()
        queue.async { [weak self] in self?.reportUnused() }
    }

    /// The encoder of the picture viewer `id` sees (or waits for).
    private func encoder(of id: String, waiting: Bool = false) -> Encoder? {
        lock.withLock {
            guard let v = viewers[id] else { return nil }
            let p = waiting ? (v.next ?? v.picture) : v.picture
            return p.flatMap { pictures[$0] } ?? source
        }
    }

    private var unusedReported = Set<PixelSize>()

    /// On `queue`: says which offered renditions no viewer sees or waits for any more (once each time).
    private func reportUnused() {
        let watched = watchedRenditions
        let unused = lock.withLock { () -> [PixelSize] in
            let idle = pictures.keys.filter { !watched.contains($0) }
            defer { unusedReported = Set(idle) }
            return idle.filter { !unusedReported.contains($0) }
        }
        for size in unused { onPictureUnused?(size) }
    }

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
                    // H.264 viewers take their frames into their own appsrc; VP8 ones hang on the VP8 branch.
                    var feeds: [(element: String, tee: String)] = isVP8 ? [("video", "vp8fan")] : []
                    if opus != nil { feeds.append((element: "sound", tee: "audiofan")) }
                    // The first VP8 viewer opens the transcoding branch (and asks for a key frame to start from).
                    if isVP8 { vp8Viewers(changedBy: 1) }
                    let peer: WebRTCPeer
                    let sdp: String
                    do {
                        peer = try WebRTCPeer(in: pipeline, name: id, launch: launch, feeds: feeds, addresses: addresses,
                                              ice: ice)
                        do {
                            let answer = try peer.answer(offer: offer, gatherTimeout: 5)
                            sdp = ice.publicIP.map { IceCandidates.addingPublic($0, to: answer) } ?? answer
                        } catch {
                            peer.remove()
                            throw error
                        }
                    } catch {
                        if isVP8 { vp8Viewers(changedBy: -1) }
                        throw error
                    }
                    var input: AppSource?
                    if !isVP8 {
                        guard let own = peer.appSource(named: "video", maxBuffers: 30) else {
                            peer.remove()
                            throw GstError(element: id, message: "\(viewerTemplate.path) needs 'appsrc name=video'")
                        }
                        own.mapTimestamps(frameClockBase: frameClockBase)
                        input = own
                    }
                    let now = ProcessInfo.processInfo.systemUptime
                    let count = lock.withLock { () -> Int in
                        pending -= 1
                        let sections = TrickleFragment.sections(of: offer)
                        viewers[id] = Viewer(peer: peer, joined: now, vp8: isVP8, input: input,
                                             ours: IceCandidates.summary(of: sdp), theirs: IceCandidates.summary(of: offer),
                                             mids: sections.sections.map(\.mid), ufrag: sections.ufrag)
                        counts.joined += 1
                        return viewers.count
                    }
                    watch(peer, id: id, vp8: isVP8, input: input)
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

    /// Candidates viewer `id` found after its offer (trickle ICE, a `PATCH` on its session), given to its webrtcbin
    /// under the media section each names (by `a=mid`, else by place). Returns how many were taken. Refused: another
    /// ICE username fragment (an ICE restart: open a new session instead), a section the offer did not have.
    public func trickle(_ id: String, fragment: TrickleFragment) async throws -> Int {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Int, any Error>) in
            queue.async { [self] in
                guard let v = lock.withLock({ viewers[id] }) else { return done.resume(throwing: Failure.unknown(id)) }
                if let theirs = fragment.ufrag, let offered = v.ufrag, theirs != offered {
                    return done.resume(throwing: Failure.refusedCandidates(
                        "ICE username fragment '\(theirs)' is not the offer's ('\(offered)'): an ICE restart is not "
                        + "supported; end the session and open a new one"))
                }
                var placed: [(Int, String)] = []
                for c in fragment.candidates {
                    let index = c.mid.flatMap { mid in v.mids.firstIndex(of: mid) } ?? (c.mid == nil ? c.index : nil)
                    guard let index, index < v.mids.count else {
                        return done.resume(throwing: Failure.refusedCandidates(
                            "a candidate of media section \(c.mid.map { "'\($0)'" } ?? "#\(c.index)"), which the offer "
                            + "did not have (its sections: \(v.mids.map { $0 ?? "?" }.joined(separator: ", ")))"))
                    }
                    placed.append((index, c.line))
                }
                for (index, line) in placed { v.peer.addRemote(candidate: line, mline: index) }
                lock.withLock {
                    viewers[id]?.trickled += placed.count
                    counts.trickled += placed.count
                    viewers[id]?.theirs += IceCandidates.summary(of: placed.map { "a=" + $0.1 }.joined(separator: "\n"))
                }
                done.resume(returning: placed.count)
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
    private func watch(_ peer: WebRTCPeer, id: String, vp8: Bool, input: AppSource?) {
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
                    encoder(of: id, waiting: true)?.requestKeyFrameForViewer()
                    onEvent(.viewerConnected(session: id))
                }
            case "failed":
                let tried = tried(id)
                queue.async { [weak self] in self?.drop(id, reason: "connection failed (ICE found no pair that works; \(tried))") }
            case "closed":
                queue.async { [weak self] in self?.drop(id, reason: "connection closed") }
            default: break
            }
        }
        peer.onReceiverTimeout { [weak self] in
            self?.queue.async { [weak self] in self?.drop(id, reason: "the viewer went silent (no RTCP)") }
        }
        // A VP8 viewer's requests go up to vp8enc inside this pipeline; an H.264 viewer's to its picture's encoder.
        input?.onKeyFrameRequest { [weak self] in self?.encoder(of: id)?.requestKeyFrameForViewer() }
        queue.asyncAfter(deadline: .now() + connectTimeout) { [weak self] in
            guard let self else { return }
            let never = lock.withLock { viewers[id].map { !$0.connected } ?? false }
            if never {
                lock.withLock { counts.timedOut += 1 }
                drop(id, reason: "never connected within \(Int(connectTimeout)) s (ICE or DTLS; \(tried(id)))")
            }
        }
    }

    /// The candidates each side offered, so that whoever set up STUN or TURN sees which way was missing: `ours: host
    /// 10.0.0.2:50312 udp, relay 203.0.113.9:49152 udp; theirs: srflx …` (none: the offer carried none, as a browser
    /// allowed only TURN's relay whose login was refused).
    private func tried(_ id: String) -> String {
        lock.withLock { viewers[id].map { v in
            "ours: " + (v.ours.isEmpty ? "none" : v.ours.joined(separator: ", "))
                + "; theirs: " + (v.theirs.isEmpty ? "none in the offer" : v.theirs.joined(separator: ", "))
        } } ?? "no candidates known"
    }

    /// On `queue`: takes the viewer out of the pipeline.
    private func drop(_ id: String, reason: String) {
        guard let v = lock.withLock({ viewers.removeValue(forKey: id) }) else { return }
        v.peer.remove()
        lock.withLock { leftDropped += v.lost }
        reportUnused()
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
        let open = vp8Watching > 0
        lock.withLock { vp8Open = open }
        if before == 0 && vp8Watching > 0 {
            pipeline.set("drop", "false", onElementNamed: "vp8gate")
            source?.requestKeyFrameForViewer()
            onEvent(.vp8Started(viewers: vp8Watching))
        } else if before > 0 && vp8Watching == 0 {
            pipeline.set("drop", "true", onElementNamed: "vp8gate")
            onEvent(.vp8Stopped)
        }
    }

    /// Called on an encoder's streaming thread with a frame of `picture` (nil: the main one): each viewer that sees
    /// it gets it from its first key frame on, a viewer waiting for it moves to it at a key frame, and the VP8 branch
    /// gets the main picture while VP8 viewers watch.
    public func deliver(_ buffer: MediaBuffer, _ caps: MediaCaps?, picture: PixelSize? = nil) {
        var switched: [(String, PixelSize)] = []
        var retry = Set<String>()
        // Viewers whose input was full: they go on at their picture's next key frame, asked for now.
        var behind = Set<String>()
        lock.withLock {
            var sent = false
            if picture == nil {
                if vp8Open {
                    if gate.admit(buffer) {
                        gate.pass(caps, to: input)
                        _ = input.push(buffer.shallowCopy())
                        sent = true
                    }
                } else {
                    gate.resync()
                }
            }
            let key = buffer.isKeyFrame, pts = buffer.pts
            for id in viewers.keys {
                guard let input = viewers[id]!.input else { continue }
                var v = viewers[id]!
                defer { viewers[id] = v }
                func give(_ b: MediaBuffer, _ c: MediaCaps?) {
                    if let t = b.pts, let last = v.last, t <= last { return }
                    guard v.gate.admit(b) else { return }
                    // Until it connects its input keeps the newest frames (appsrc's own leak), and it asks for a key
                    // frame as it connects. From then on a full input loses whole groups of pictures.
                    if v.connected {
                        switch v.overflow.admit(b, into: input) {
                        case .push: break
                        case .rest: return
                        case .full:
                            behind.insert(id)
                            return
                        }
                    }
                    v.gate.pass(c, to: input)
                    _ = input.push(b.shallowCopy())
                    v.last = b.pts ?? v.last
                    sent = true
                }
                if let next = v.next, next == picture {
                    // The new picture's first key frame later than what the viewer has: the switch. A frame of the
                    // old picture held back from the same moment or later is left out.
                    guard key, let pts, v.last.map({ pts > $0 }) ?? true else {
                        if key { retry.insert(id) }
                        continue
                    }
                    if let held = v.held, let t = held.buffer.pts, t < pts { give(held.buffer, held.caps) }
                    v.held = nil
                    v.picture = picture
                    v.next = nil
                    v.gate.resync()
                    give(buffer, caps)
                    switched.append((id, caps?.videoSize ?? PixelSize(width: 0, height: 0)))
                } else if v.picture == picture {
                    if v.next != nil {
                        // Waiting to switch: one frame behind.
                        if let held = v.held { give(held.buffer, held.caps) }
                        v.held = (buffer, caps)
                    } else {
                        if let held = v.held { give(held.buffer, held.caps) }
                        v.held = nil
                        give(buffer, caps)
                    }
                }
            }
            if sent {
                _delivered += 1
                _bytes += UInt64(buffer.size)
            }
        }
        // A key frame that came too late for a switch (its picture was encoded behind the viewer's): ask for another.
        if !retry.isEmpty { (picture.flatMap { p in lock.withLock { pictures[p] } } ?? source)?.requestKeyFrameForViewer() }
        for id in behind { encoder(of: id)?.requestKeyFrameForViewer() }
        guard !switched.isEmpty else { return }
        for (id, size) in switched { onEvent(.viewerSwitched(session: id, picture: picture, size: size)) }
        queue.async { [weak self] in self?.reportUnused() }
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
        encoder.subscribe(self, watching: { [weak self] in self?.watchesMain ?? false }) { [weak self] b, c in
            self?.deliver(b, c)
        }
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

extension WebRTCOutput: ViewerOutput {
    public var wantsMain: Bool { watchesMain }
    public var wantedRenditions: Set<PixelSize> { watchedRenditions }

    /// The main picture, and every rendition offered to the browsers (more are made for their windows later).
    public func serve(from sources: ServingSources) {
        feed(from: sources.main)
        for (size, e) in sources.renditions { offer(size, from: e) }
    }

    public func report(into status: inout LiveSession.Status) {
        status.webrtc = .init(viewers: viewerCount, connected: connectedCount, vp8: vp8Count, max: maxViewers, totals: totals)
        status.webrtcViewers = viewerStates
    }
}
