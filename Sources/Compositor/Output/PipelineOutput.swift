import Foundation

/// An output that is its own pipeline fed the encoded stream: a recording, a push to a server, or a
/// user's `--pipeline` tail. It fails alone: its errors never reach the encoder or the other outputs.
///
/// `@unchecked Sendable`: every mutable field is behind `lock`; encoders call `deliver` on their streaming threads.
///
/// One concern in one file, longer than 420 lines on purpose: starting, the switch between encoders at a frame,
/// delivering picture and sound, failing (mend, retry with backoff) and finishing are one state machine over the
/// same locked fields (the pipeline, its appsrcs, the source schedule, the state).
public final class PipelineOutput: @unchecked Sendable {
    public enum State: String, Sendable {
        /// `stuck`: it could not be stopped (a write that never returns) and was left behind at the end.
        case starting, running, failed, retrying, stopped, stuck
    }

    /// How long its pipeline may take nothing (its queue full all along) before it is failed as stuck: a reader that
    /// stopped reading a FIFO or a pipe, a hung mount. It drops by group of pictures meanwhile, as any slow output.
    public static let stuckAfter: TimeInterval = 10
    /// How long a pipeline may take to stop once its end came, or did not come in time, before it is left behind.
    public static let stopBound: TimeInterval = 2

    public let id: String
    public let spec: OutputSpec
    public let template: PipelineTemplate
    /// The values placeholders are filled with (location, tags).
    private var values: [String: String]
    public private(set) var launch = ""
    private var pipeline: Pipeline?
    private var input: AppSource?
    private var restamper = Restamper()
    private var gate = StreamGate()
    private let lock = NSLock()
    private var _state = State.starting
    private var _delivered: UInt64 = 0
    private var _bytes: UInt64 = 0
    private var _restarts = 0
    private var _failures: OutputFailures?
    /// A push's retries: 1 s, doubling, at most 30 s; a push that ran 10 s before failing starts again from 1 s.
    private var backoff = Backoff(first: 1, limit: 30, healthyAfter: 10)
    private var startedAt = Date()
    private var retryTimer: DispatchWorkItem?
    /// A failed pipeline's teardown in progress (see `fail`).
    private let teardown = DispatchGroup()
    /// A `start()` in progress: `finish` waits for it (a split part starts off the frame loop, and may be ended
    /// by the next resize before its pipeline runs).
    private let startup = DispatchGroup()
    /// Frames fed before its pipeline runs (a split part, `ctl record start`), sent first once it does: at most
    /// `maxQueued`; past that the rest wait for a key frame, as after an overflow.
    private var early: [HeldFrame] = []
    private var earlyOverflowed = false
    /// `finish` has sent the end of stream and waits for it: a failure now still closes the output with its
    /// message, and ends that wait.
    private var finishing = false
    /// A `finish` under way, which a second call (a split part ending by itself as the run stops) waits for.
    private let finished = DispatchGroup()
    /// How the last `finish` ended, for a second call that waited for it.
    private var lastEnding: Ending?
    /// A recording's file is marked as being written while its pipeline runs (`pipcompose mend` refuses it).
    private var writerLock: WriterLock?
    private let log: @Sendable (String) -> Void
    /// Which encoder feeds this output from now on (the session moves fit recordings between encoders on resize).
    private var source: Encoder?
    /// Which encoder each frame is taken from, by frame time: frame-exact moves between encoders and cuts.
    private var schedule: SourceSchedule<UInt64, HeldFrame>?
    /// Every encoder this output listens to (until it finishes).
    private var feeders: [UInt64: WeakEncoder] = [:]
    /// The schedule reached its end (a split part's last frame): finishing has begun.
    private var ending = false
    /// Frames that came without a timestamp, which no muxer takes (counted, never passed on).
    private var _untimed: UInt64 = 0
    /// Frames refused after a switch of encoders because the new stream did not start on a key frame, and
    /// frames of an old encoder given up on (counted as dropped).
    private var _lostAtSwitch: UInt64 = 0
    /// Frames left out because the pipeline could not keep up (its queue full: a slow disk, a slow server), and
    /// the rest of that key frame's group after them, which would decode to garbage without the lost frame.
    private var _overflowed: UInt64 = 0
    private var overflowing = false
    /// Since when (monotonic ns) its queue has been full with nothing taken; whether it was failed for that.
    private var fullSince: UInt64?
    private var stuckReported = false
    /// A file that cannot change picture size (MP4, MKV) keeps the caps it started with.
    private let keepsFirstCaps: Bool
    /// How many frames the output may queue before it drops (a recording tolerates a slow disk longer).
    let maxQueued: Int
    /// A recording takes its frames 100 ms at a time (see `FrameBatch`); other outputs (nil) each frame at once.
    private var batch: FrameBatch<HeldFrame>?
    /// And its sound the same way.
    private var audioBatch: FrameBatch<HeldFrame>?
    static let recordingBatch: MediaTime = 100_000_000
    /// Written into the container by the element named `mux`, when it takes tags.
    public var title: String?
    /// The rendition it carries (`small.mp4@416x234`); nil: the main picture. Set before it starts.
    public var rendition: PixelSize?
    /// Told of failures and recoveries (the session turns them into control events).
    public var onEvent: (@Sendable (SessionEvent) -> Void)?
    /// The stream has an audio track and this output's pipeline carries it (an `[audio]` chain).
    public let carriesAudio: Bool
    /// The codec of the sound it takes.
    public let audioCodec: AudioCodec
    private var audioInput: AppSource?
    private var audioCaps: MediaCaps?
    private var audioSource: AudioTrack?
    /// Sound that came before the first frame set the output's start, held until it does (bounded).
    private var pendingAudio: [HeldFrame] = []
    static let pendingAudioLimit = 64
    private var _audioDelivered: UInt64 = 0
    /// A WHIP push's bearer token and STUN/TURN servers; its session with the server, one per pipeline it ran.
    public var whipLogin: (token: String?, ice: IceSettings) = (nil, IceSettings())
    private var whip: WHIPPublisher?

    public init(id: String, spec: OutputSpec, template: PipelineTemplate, values: [String: String],
                maxQueued: Int, audio: AudioCodec? = nil, log: @escaping @Sendable (String) -> Void) {
        carriesAudio = audio != nil && template.hasAudio
        audioCodec = audio ?? .aac
        self.id = id
        self.spec = spec
        self.template = template
        var values = values
        values["audio_parse"] = audioCodec.parser
        self.values = values
        self.maxQueued = maxQueued
        self.log = log
        if case .record(_, let format, _) = spec { keepsFirstCaps = format.fixedSize } else { keepsFirstCaps = false }
        if case .record = spec {
            batch = FrameBatch(span: Self.recordingBatch, maxFrames: max(1, maxQueued / 2))
            audioBatch = FrameBatch(span: Self.recordingBatch, maxFrames: max(1, maxQueued / 2))
        }
    }

    public var state: State { lock.withLock { _state } }
    public var delivered: UInt64 { lock.withLock { _delivered } }
    public var bytes: UInt64 { lock.withLock { _bytes } }
    public var restarts: Int { lock.withLock { _restarts } }
    public var failures: OutputFailures? { lock.withLock { _failures } }
    public var dropped: UInt64 { lock.withLock { retiredDrops + (input?.dropped ?? 0) + _lostAtSwitch + _overflowed } }
    /// Drops counted by inputs already released (after a failure, a restart, or the end).
    private var retiredDrops: UInt64 = 0
    public var location: String? { values["location"] }

    /// Builds the launch text without starting, for --dump-pipeline and early checks.
    public func prepare() throws -> String {
        launch = try template.render(values, audio: carriesAudio)
        return launch
    }

    /// Builds and starts the pipeline; a bad pipeline or an unopenable sink is thrown.
    public func start() throws {
        startup.enter()
        defer { startup.leave() }
        if launch.isEmpty { _ = try prepare() }
        // The write end found for a FIFO's reader is held until the sink has opened its own: closed before, the
        // reader would see the end of its input, leave, and the sink would wait for another one forever.
        let heldWriteEnd = try location.flatMap { path -> Int32? in
            guard case .record = spec else { return nil }
            return try Self.awaitReader(ofFIFO: path, id: id)
        }
        defer { if let heldWriteEnd { close(heldWriteEnd) } }
        let p = try Pipeline(name: id, launch: launch)
        guard let input = p.appSource(named: "in", maxBuffers: maxQueued) else {
            p.stop(drain: false)
            throw GstError(element: id, message: "\(template.path) needs an 'appsrc name=in' to receive the stream")
        }
        var audioInput: AppSource?
        if carriesAudio {
            guard let a = p.appSource(named: "audio", maxBuffers: maxQueued * 2) else {
                p.stop(drain: false)
                throw GstError(element: id, message: "\(template.path): the [audio] chain needs an 'appsrc name=audio'")
            }
            audioInput = a
        }
        // Frames and sound come up to a batch late: a muxer that waits for every track knows to wait that long.
        // Both inputs say so (a muxer refuses, with a warning a buffer, tracks whose latencies cannot meet).
        if let span = batch?.span {
            for i in [input, audioInput].compactMap({ $0 }) { i.set("min-latency", String(span)) }
        }
        // The title goes to the muxer as a global tag (MP4 udta, Matroska segment tags), where players show it.
        if let title { p.setTitle(title, onElementNamed: "mux") }
        lock.withLock {
            self.pipeline = p
            self.input = input
            self.audioInput = audioInput
            self.audioCaps = nil
            // Sound held while it first starts goes out after its first frame; a restart begins afresh.
            if _state != .starting { self.pendingAudio = [] }
            _ = self.batch?.drain()
            _ = self.audioBatch?.drain()
            self.gate.reset()
            self.restamper.reset()
            self.fullSince = nil
            self.stuckReported = false
        }
        // Events name their pipeline: a late error of one already taken down (after a restart, or one `finish` has
        // acted on) is not this output's failure.
        let key = ObjectIdentifier(p)
        do {
            // WebRTC to a WHIP server: its session is negotiated once the stream flows, and ends with this pipeline.
            if case .push(let url, "whip") = spec {
                let publisher = try WHIPPublisher(in: p, url: url, token: whipLogin.token, ice: whipLogin.ice) { [weak self] in
                    self?.requestKeyFrameForReceiver()
                }
                lock.withLock { whip = publisher }
                input.onKeyFrameRequest { [weak self] in self?.requestKeyFrameForReceiver() }
            }
            // RTP with RTCP (push-rtp): reports go out from the socket feedback comes back to, and a receiver's
            // request for a key frame (a PLI or FIR, which rtpbin turns into an upstream event) reaches the encoder.
            if p.hasElement(named: "rtcp_in") {
                try p.shareSocket(from: "rtcp_in", to: "rtcp_out")
                input.onKeyFrameRequest { [weak self] in self?.requestKeyFrameForReceiver() }
            }
            try p.play { [weak self] event in self?.handle(event, from: key) }
        } catch {
            lock.withLock { self.pipeline = nil; self.input = nil; self.audioInput = nil; self.whip = nil }
            p.stop(drain: false)
            throw error
        }
        // The sink has created the file by now.
        let writing = location.flatMap { path -> WriterLock? in
            guard case .record = spec else { return nil }
            return WriterLock(path: path)
        }
        lock.withLock {
            _state = .running
            startedAt = Date()
            writerLock = writing
            let held = early
            early = []
            for frame in held { send(frame) }
            if earlyOverflowed {
                earlyOverflowed = false
                overflowing = true
                gate.resync()
            }
        }
        source?.requestKeyFrame()
    }

    /// A recording into a FIFO that no process reads would wait in its sink's open forever: it waits here for a
    /// reader, up to `readerWait`, and is refused after that with what to do. Returns the write end it opened, which
    /// the caller holds until its sink has opened its own; nil for anything but a FIFO.
    static let readerWait: TimeInterval = 10
    private static func awaitReader(ofFIFO path: String, id: String) throws -> Int32? {
        var st = stat()
        guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFIFO else { return nil }
        let deadline = DispatchTime.now() + readerWait
        while true {
            // A write end opens without waiting only when a reader has the FIFO open (ENXIO otherwise).
            let fd = Glibc.open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if fd >= 0 { return fd }
            guard errno == ENXIO, DispatchTime.now() < deadline else { break }
            usleep(100_000)
        }
        throw GstError(element: id, message: "nothing reads the FIFO '\(path)' (waited \(Int(readerWait)) s): start its "
                       + "reader first, then record into it")
    }

    /// A receiver asked for a key frame: the encoder sends one, spaced from the last as for any viewer.
    private func requestKeyFrameForReceiver() {
        lock.withLock { source }?.requestKeyFrameForViewer()
    }

    /// Takes the frames of `encoder` stamped `time` or later (0: all from now on).
    public func feed(from encoder: Encoder, startingAt time: MediaTime = 0) {
        lock.withLock {
            schedule = SourceSchedule(source: encoder.serial, from: UInt64(time), maxHeld: maxQueued)
            source = encoder
        }
        listen(to: encoder, requestKeyFrame: true)
    }

    /// From the frame stamped `time` on, frames come from `next`; earlier ones still come from the encoder
    /// before it, so the file holds every frame once and in order. `next` should make a key frame at `time`.
    public func switchSource(to next: Encoder, at time: MediaTime) {
        lock.withLock {
            source = next
            apply(schedule?.switchTo(next.serial, at: UInt64(time)))
        }
        listen(to: next, requestKeyFrame: false)
    }

    /// Ends the output after its last frame before `time` (a split part): it finishes itself once the encoder
    /// delivered that frame.
    public func end(at time: MediaTime) {
        lock.withLock { apply(schedule?.switchTo(nil, at: UInt64(time))) }
    }

    /// `encoder` was stopped and drained: frames waiting for it to finish go out.
    public func sourceEnded(_ encoder: Encoder) {
        lock.withLock {
            feeders.removeValue(forKey: encoder.serial)
            apply(schedule?.ended(encoder.serial))
        }
    }

    private func listen(to encoder: Encoder, requestKeyFrame: Bool) {
        let id = encoder.serial
        guard lock.withLock({ () -> Bool in
            defer { feeders[id] = WeakEncoder(encoder: encoder) }
            return feeders[id]?.encoder == nil
        }) else { return }
        encoder.subscribe(self, requestKeyFrame: requestKeyFrame) { [weak self] b, c in self?.deliver(b, c, from: id) }
    }

    /// Takes the sound of `track` from now on, on the picture's timeline (nothing when the pipeline has no
    /// `[audio]` chain).
    public func hear(_ track: AudioTrack) {
        guard carriesAudio else { return }
        lock.withLock { audioSource = track }
        track.subscribe(self, codec: audioCodec) { [weak self] b, c in self?.deliverAudio(b, c) }
    }

    /// Sound packets handed to the pipeline.
    public var audioDelivered: UInt64 { lock.withLock { _audioDelivered } }

    /// Called on the audio encoder's streaming thread with each packet. Packets wait for the first frame (the
    /// output's start), then go out moved by the same amount as the picture; none goes out once the output
    /// is ending.
    func deliverAudio(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        lock.lock()
        defer { lock.unlock() }
        guard _state == .running || _state == .starting, !ending else { return }
        guard let audioInput, restamper.start != nil else {
            if pendingAudio.count >= Self.pendingAudioLimit { pendingAudio.removeFirst() }
            pendingAudio.append(HeldFrame(buffer: buffer, caps: caps))
            return
        }
        if !pendingAudio.isEmpty {
            for held in pendingAudio { sendAudio(held.buffer, held.caps, to: audioInput) }
            pendingAudio = []
        }
        guard audioBatch != nil else { return sendAudio(buffer, caps, to: audioInput) }
        for ready in audioBatch!.add(HeldFrame(buffer: buffer, caps: caps), time: buffer.pts ?? 0) {
            sendAudio(ready.buffer, ready.caps, to: audioInput)
        }
    }

    /// Pushes one packet moved onto the picture's timeline; holds the lock.
    private func sendAudio(_ buffer: MediaBuffer, _ caps: MediaCaps?, to audioInput: AppSource) {
        guard let moved = restamper.follow(buffer) else { return }
        if let caps, audioCaps == nil || audioCaps!.pointer != caps.pointer {
            audioInput.setCaps(caps)
            audioCaps = caps
        }
        audioInput.push(moved)
        _audioDelivered += 1
    }

    /// The output has been told where it ends (`end(at:)`): it takes no new work.
    public var isEnding: Bool { lock.withLock { ending || (schedule != nil && schedule!.latest == nil) } }

    /// Frames that came without a timestamp (none should).
    public var untimed: UInt64 { lock.withLock { _untimed } }

    /// Called on an encoder's streaming thread with each encoded frame.
    func deliver(_ buffer: MediaBuffer, _ caps: MediaCaps?, from encoder: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        guard _state == .running || _state == .starting, schedule != nil else { return }
        guard let pts = buffer.pts else {
            _untimed += 1
            return
        }
        apply(schedule!.offer(HeldFrame(buffer: buffer, caps: caps), time: pts, from: encoder))
    }

    /// Sends what the schedule let through, releases the rest; holds the lock.
    private func apply(_ outcome: SourceSchedule<UInt64, HeldFrame>.Outcome?) {
        guard let outcome else { return }
        // Another encoder's stream begins: it starts on its own key frame.
        if outcome.switched { gate.resync() }
        for frame in outcome.send { send(frame) }
        if outcome.ended && !ending {
            ending = true
            DispatchQueue.global().async { [self] in finish() }
        }
    }

    private func send(_ frame: HeldFrame) {
        if _state == .starting { return hold(frame) }
        guard _state == .running, let input else { return }
        guard gate.admit(frame.buffer) else {
            // Waiting for a key frame: at the start that is normal; after a switch or an overflow, a frame lost.
            if overflowing { _overflowed += 1 } else if _delivered > 0 { _lostAtSwitch += 1 }
            return
        }
        guard batch != nil else { return push(frame, to: input) }
        for ready in batch!.add(frame, time: frame.buffer.pts ?? 0) { push(ready, to: input) }
    }

    /// Its queue is full: once it has been for `stuckAfter` (nothing taken all that time) it is failed as stuck, off
    /// this thread; holds the lock.
    private func noteFull() {
        let now = DispatchTime.now().uptimeNanoseconds
        guard let since = fullSince else {
            fullSince = now
            return
        }
        guard !stuckReported, now - since >= UInt64(Self.stuckAfter * 1e9), let p = pipeline else { return }
        stuckReported = true
        let key = ObjectIdentifier(p), id = self.id
        let error = GstError(element: id, message: "stuck: it took nothing for \(Int(Self.stuckAfter)) s (its queue "
                             + "full: a reader that stopped reading, a hung disk or mount)")
        DispatchQueue.global().async { [weak self] in self?.fail(error, of: key) }
    }

    /// Keeps a frame that came before the pipeline runs; holds the lock.
    private func hold(_ frame: HeldFrame) {
        guard early.count < maxQueued, !earlyOverflowed else {
            _overflowed += 1
            earlyOverflowed = true
            return
        }
        early.append(frame)
    }

    /// Hands a frame to the pipeline; holds the lock.
    /// The caps of the last frame it took (size, and H.264's profile and level): what the HLS master names.
    public var videoCaps: MediaCaps? { lock.withLock { lastCaps } }
    private var lastCaps: MediaCaps?

    private func push(_ frame: HeldFrame, to input: AppSource) {
        // The pipeline is behind (its queue full): this frame is lost, and so is the rest of its group, up to the next
        // key frame. Leaving out the queue's oldest frame instead (appsrc's own leak) would leave a hole inside a
        // group already queued, and every frame after it until the next key frame would decode to garbage.
        if overflowing {
            guard frame.buffer.isKeyFrame else {
                _overflowed += 1
                return
            }
            overflowing = false
        }
        if input.queued >= input.maxBuffers {
            _overflowed += 1
            overflowing = true
            gate.resync()
            noteFull()
            return
        }
        fullSince = nil
        if let caps = frame.caps { lastCaps = caps }
        // A fixed-size file keeps its first caps: after a resize a letterboxing encoder of the same size takes
        // over, whose caps differ in fields that do not matter, and mp4mux would start a second track
        // description that ffmpeg refuses to play. Its SPS/PPS are the same, and they travel in band too.
        gate.pass(frame.caps, to: input, keepFirst: keepsFirstCaps)
        input.push(restamper.restamp(frame.buffer))
        _delivered += 1
        _bytes += UInt64(frame.buffer.size)
    }

    private func handle(_ event: Pipeline.Event, from pipeline: ObjectIdentifier) {
        switch event {
        case .error(let e):
            fail(e, of: pipeline)
        case .warning(let w):
            log("\(id): warning: \(w)")
        case .eos:
            break
        }
    }

    /// Starts, or for a push whose server cannot be reached yet, says so and keeps retrying with backoff
    /// (servers come and go; the other outputs start regardless). Other outputs' errors are thrown.
    public func startOrRetry() throws {
        do {
            try start()
        } catch {
            guard case .push = spec else {
                // Never ran: it says so as failed (with what was held for it let go), not as finished.
                lock.withLock {
                    _state = .failed
                    early = []
                    pendingAudio = []
                }
                throw error
            }
            lock.withLock { _state = .running }
            fail(error as? GstError ?? GstError(element: id, message: "\(error)"))
        }
    }

    /// Closes the output after an error of `failed` (its pipeline; nil: it could not start), at any moment: while
    /// it runs, or while `finish` waits for its end of stream. Says so once, mends a cut file, and retries a push
    /// unless the run is ending.
    private func fail(_ e: GstError, of failed: ObjectIdentifier? = nil) {
        let taken = lock.withLock { () -> (pipeline: Pipeline?, acts: Bool, atEnd: Bool)? in
            // Only the pipeline running now fails the output, and once: a second error message, or the same error
            // seen by both the bus thread and `finish`, changes nothing.
            if let failed, pipeline.map(ObjectIdentifier.init) != failed { return nil }
            let acts = _state == .running || finishing
            if acts { _failures = OutputFailures(count: (_failures?.count ?? 0) + 1, last: e.description, retryingAtEnd: false) }
            _state = .failed
            let p = pipeline
            pipeline = nil
            let session = whip
            whip = nil
            DispatchQueue.global().async { session?.end() }
            retiredDrops += input?.dropped ?? 0
            input = nil
            audioInput = nil
            early = []
            pendingAudio = []
            _ = batch?.drain()
            _ = audioBatch?.drain()
            // Let go of the file before it is mended.
            writerLock?.release()
            writerLock = nil
            // `finish` waits for the teardown from here on: its `didStop` comes after this `outputFailed`.
            if acts { teardown.enter() }
            return (p, acts, finishing)
        }
        guard let taken, taken.acts else { return }
        let p = taken.pipeline
        onEvent?(.outputFailed(output: id, reason: e.description))
        // A file the failure cut in the middle of a write (a full disk) is mended to end on its last whole frame.
        let container: RecordingMend.Container? = switch spec {
        case .record(_, .mp4, _): .mp4
        case .record(_, .mkv, _): .matroska
        case .record(_, .ts, _): .transportStream
        default: nil
        }
        let path = location
        // Tear down off the bus thread: stopping a pipeline joins work its own bus thread is part of. `finish`
        // waits for it, so the file is mended before the process ends.
        DispatchQueue.global().async { [teardown, log, id] in
            if let p, !p.stop(within: Self.stopBound) {
                log("\(id): its pipeline did not stop within \(Int(Self.stopBound)) s (a write that never returns); "
                    + "left behind as it is: its file holds what was written (`pipcompose mend FILE` ends it on its "
                    + "last whole frame once nothing writes it)")
                teardown.leave()
                return
            }
            if let container, let path, let mended = container.mend(path), mended.changed {
                log("\(id): the failure stopped a write part way; mended to end on its last whole frame: "
                    + mended.changes(in: container))
            }
            teardown.leave()
        }
        switch spec {
        case .push where !taken.atEnd:
            let delay = lock.withLock { () -> TimeInterval in
                _state = .retrying
                // Back off while failures come quickly; a push that ran a while starts again from 1 s.
                return backoff.failed(afterRunning: Date().timeIntervalSince(startedAt))
            }
            log("\(id): failed: \(e); the other outputs continue; retrying in \(Int(delay)) s")
            let work = DispatchWorkItem { [weak self] in self?.retry() }
            lock.withLock { retryTimer = work }
            DispatchQueue.global().asyncAfter(deadline: .now() + delay, execute: work)
        case .push:
            log("\(id): failed as it ended: \(e); not retried, the run is ending")
        default:
            log("\(id): failed and closed: \(e); the other outputs continue. "
                + "What was written before the failure is kept.")
        }
        // One that will not start again leaves its encoders: it would be handed every packet for the rest of the run,
        // and count as someone watching them (a viewer's key frame would wait its turn), long after the run let go of
        // it (`RunTally` keeps the newest outputs that ended).
        if state == .failed { stopListening() }
    }

    private func retry() {
        guard state == .retrying else { return }
        lock.withLock { _restarts += 1 }
        do {
            try start()
            log("\(id): restarted (attempt \(restarts))")
            onEvent?(.outputRecovered(output: id, attempt: restarts))
        } catch {
            lock.withLock { _state = .running }
            fail(error as? GstError ?? GstError(element: id, message: "\(error)"))
        }
    }

    /// How `finish` ended an output.
    public typealias Ending = OutputEnding

    /// Ends the stream: EOS through the muxer so the file is finalized, then NULL. An error while waiting for the
    /// EOS ends the wait at once: the output fails as it would while running.
    @discardableResult
    public func finish(timeout: TimeInterval = 10) -> Ending {
        _ = startup.wait(timeout: .now() + timeout)
        _ = teardown.wait(timeout: .now() + timeout)
        let (p, input, audioInput, second) = lock.withLock { () -> (Pipeline?, AppSource?, AppSource?, Bool) in
            if finishing { return (nil, nil, nil, true) }
            retryTimer?.cancel()
            let was = _state
            if was == .retrying { _failures?.retryingAtEnd = true }
            // The frames of the batch still collecting go out before the end of stream.
            let last = batch?.drain() ?? []
            if was == .running, let input = self.input { for frame in last { push(frame, to: input) } }
            let lastSound = audioBatch?.drain() ?? []
            if was == .running, let a = self.audioInput { for p in lastSound { sendAudio(p.buffer, p.caps, to: a) } }
            // A failed output stays failed, so the run's summary says its counts end at the failure.
            _state = was == .failed ? .failed : .stopped
            early = []
            pendingAudio = []
            guard was == .running, let pipeline, let input = self.input else { return (pipeline, nil, nil, false) }
            finishing = true
            finished.enter()
            return (pipeline, input, self.audioInput, false)
        }
        if second {
            _ = finished.wait(timeout: .now() + timeout)
            return lock.withLock { lastEnding ?? .timedOut }
        }
        stopListening()
        let (lost, gaveUp, untimed) = lock.withLock { (_lostAtSwitch, schedule?.gaveUp ?? 0, _untimed) }
        if lost + UInt64(gaveUp) + untimed > 0 {
            log("\(id): \(lost) frames lost at encoder switches (\(gaveUp) switches gave up waiting), \(untimed) without timestamps")
        }
        guard let p else { return lock.withLock { _state == .failed ? .failed : lastEnding ?? .finalized } }
        var result = Ending.finalized
        if let input {
            // Both tracks end together: the muxer finalizes once each has its end of stream.
            audioInput?.endOfStream()
            input.endOfStream()
            switch p.waitForEnd(timeout: timeout) {
            case .eos:
                break
            case .error(let e):
                // Closed now, whether the bus thread or this call gets there first.
                fail(e, of: ObjectIdentifier(p))
            case .timedOut:
                result = .timedOut
            }
        }
        if lock.withLock({ _state == .failed }) {
            // The failure's teardown stops the pipeline and mends the file.
            _ = teardown.wait(timeout: .now() + timeout)
            result = .failed
        } else if !p.stop(within: Self.stopBound) {
            // Blocked in a write that never returns: left behind, the other outputs are not held up by it.
            log("\(id): stuck: its end did not come out within \(Int(timeout)) s and its pipeline did not stop within "
                + "\(Int(Self.stopBound)) s (a reader that stopped reading, a hung disk or mount); left behind, its file "
                + "as far as it got (`pipcompose mend FILE` ends it on its last whole frame)")
            lock.withLock { _state = .stuck }
            result = .abandoned
        }
        let session = lock.withLock { () -> WHIPPublisher? in
            defer { whip = nil }
            return whip
        }
        session?.end()
        lock.withLock {
            writerLock?.release()
            writerLock = nil
            pipeline = nil
            retiredDrops += self.input?.dropped ?? 0
            self.input = nil
            self.audioInput = nil
            gate.reset()
            if input != nil {
                finishing = false
                lastEnding = result
            }
        }
        if input != nil { finished.leave() }
        return result
    }

    /// Stopped with its end out (an end that timed out, or one left behind stuck, still has something to say at the
    /// run's end), or failed with its teardown done.
    public var hasEnded: Bool {
        let closed = lock.withLock {
            pipeline == nil && !finishing
                && (_state == .failed || _state == .stopped && (lastEnding ?? .finalized) == .finalized)
        }
        return closed && teardown.wait(timeout: .now()) == .success
    }

    /// Leaves every encoder and lets go of held frames.
    private func stopListening() {
        let encoders = lock.withLock { () -> [Encoder] in
            _ = schedule?.releaseAll()
            defer { feeders = [:] }
            return feeders.values.compactMap(\.encoder)
        }
        for e in encoders { e.unsubscribe(self) }
        lock.withLock { audioSource }?.unsubscribe(self)
    }
}

/// An encoded frame and its caps, held while an output's schedule decides about it.
struct HeldFrame {
    let buffer: MediaBuffer
    let caps: MediaCaps?
}

private struct WeakEncoder {
    weak var encoder: Encoder?
}

extension PipelineOutput: Output {
    public var stateText: String { state.rawValue }
    public func open() throws { try startOrRetry() }
    public func feed(from encoder: Encoder) { feed(from: encoder, startingAt: 0) }
}

extension PipelineOutput {
    /// Ends it as the run ends. A file must be finalized: false when its end did not come out in time. A push only
    /// says goodbye to its server, which may be slow or gone: it gets 3 s and never fails the run. An output that
    /// fails now has said so and is closed at once.
    public func finishAsRunEnds() -> Bool {
        if case .push = spec {
            if finish(timeout: 3) == .timedOut { log("\(id): the server did not acknowledge the end of stream") }
            return true
        }
        let ending = finish()
        return ending != .timedOut && ending != .abandoned
    }
}
