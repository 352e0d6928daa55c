import CGst
import Foundation

/// Decodes a stream and reads the timecode strip of every frame into `ProbeStats`.
///
/// The decoded frame's arrival time is taken when the appsink hands it over (no display sync, no jitter buffer
/// unless asked), so latency is render → decoded. The appsink never drops: a probe too slow to keep up makes
/// its source wait rather than report frames it lost itself as the stream's.
///
/// `@unchecked Sendable`: the figures are behind `lock` and `endCondition`; frames arrive on one streaming thread,
/// the only user of `luma` and `readableSeen`.
public final class Probe: @unchecked Sendable {
    public enum Transport: String, Sendable, CaseIterable { case tcp, udp }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public let url: String
    public let launch: String
    /// False for files: their frames were drawn long ago, so latency is not measured.
    public let isLive: Bool
    private let pipeline: Pipeline
    private var sink: AppSink?
    private let lock = NSLock()
    private var stats: ProbeStats
    private let luma = LumaReader()
    private var _ended = false
    private var _failure: GstError?
    private let endCondition = NSCondition()
    private var endedAt: Double?
    private let now: @Sendable () -> Double
    /// A file's clock: where the last frame seen ends on the file's own timeline (ms). A file decodes faster than it
    /// plays, so its seconds, fps and per-second figures are counted in its own time, not in the time reading took.
    private var fileTimeMs: Double?
    /// Compares each readable frame with the picture the scene draws for it (`probe --reference`).
    private let comparer: ReferenceComparer?
    /// Only every this many readable frames is compared (a soak samples; `probe` compares all it can).
    private let compareEvery: Int
    private var readableSeen = 0
    /// The sound, when the pipeline has an `audio` appsink: ticks found and placed against the picture.
    private var audioSink: AppSink?
    private var ticks = TickDetector()
    private var av: AVSyncStats
    /// A WHEP source's signaling (`whep+http://…`): offered once the pipeline plays, ended at `stop()`.
    private let webrtc: WHEPClient.Options
    private var whep: WHEPClient?
    /// False: a WHEP viewer that accounts for frames by their timestamps without decoding them (a soak's swarm).
    public let decodes: Bool
    /// The accounting viewer's last frame timestamp and number, and the frame period seen (the smallest step).
    private var counted: (pts: UInt64, frame: UInt64)?
    private var period: UInt64?
    /// An accounting viewer's decoded sample (`sampling(_:)`): its decoder while it is in the sample (its input and
    /// output), and whether it still waits for the key frame it asked for (frames before it would decode to garbage).
    private var sampler: (pipeline: Pipeline, input: AppSource, output: AppSink)?
    private var awaitingKeyFrame = false
    private var samplerCaps: MediaCaps?
    /// Frames the sample's decoder may have waiting.
    static let sampleQueue = 8
    /// When the sample's decoder of this turn gave its first picture (wall ms): its first second counts for
    /// everything but latency, as a decoding probe's first second does (a decoder just made runs late at first: the
    /// sampled p99 read 3 times a decoding probe's beside it, the p50 the same).
    private var sampleFirstPictureMs: Double?
    /// An accounting viewer's appsink for VP8 (`sink` takes H.264).
    private var vp8Sink: AppSink?

    /// `now`: wall clock in milliseconds since 1970 (injected for tests of the bookkeeping).
    /// `keepSeconds`: finished seconds kept for `snapshot()` (a soak needs only the last few).
    /// `reference`: the source's scene, to compare every decoded picture with; frames whose SSIM falls below
    /// `corruptBelow` are counted as corrupt.
    /// `sound`: also decode the sound (an `[audio]` chain in the probe pipeline) and place its ticks against the
    /// picture. Off by default: a GStreamer pipeline with a branch that never links (a stream without sound) never
    /// starts its rtspsrc flowing.
    public init(url: String, transport: Transport = .tcp, jitterBufferMs: Int = 0, sound: Bool = false, warmupMs: Double = 1000,
                keepSeconds: Int = 86_400, reference: ReferencePicture? = nil, corruptBelow: Double = 0.9,
                compareEvery: Int = 1, webrtc: WHEPClient.Options = WHEPClient.Options(), decodes: Bool = true,
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 * 1000 }) throws {
        self.url = url
        self.now = now
        self.webrtc = webrtc
        self.decodes = decodes
        let (text, live) = try Self.launch(for: url, transport: transport, jitterBufferMs: jitterBufferMs,
                                           sound: sound && decodes, decodes: decodes)
        launch = text
        isLive = live
        stats = ProbeStats(measuresLatency: live, warmupMs: warmupMs, keepSeconds: keepSeconds)
        av = AVSyncStats(keep: keepSeconds)
        pipeline = try Pipeline(name: "probe", launch: text)
        self.compareEvery = max(1, compareEvery)
        comparer = reference.map {
            ReferenceComparer(reference: $0, corruptBelow: corruptBelow, waitForSlot: !live, keepSeconds: keepSeconds)
        }
    }

    /// The pipeline text for a URL or a path.
    static func launch(for url: String, transport: Transport, jitterBufferMs: Int, sound: Bool = false,
                       decodes: Bool = true) throws -> (String, Bool) {
        guard (0...10_000).contains(jitterBufferMs) else {
            throw Invalid(description: "the jitter buffer must be 0...10000 ms, got \(jitterBufferMs)")
        }
        if !decodes {
            guard WHEPClient.endpoint(of: url) != nil else {
                throw Invalid(description: "only WHEP viewers (whep+http://…) can count frames without decoding them, not '\(url)'")
            }
            return (try PipelineTemplate.load("probe-whep-count").render(["latency": String(jitterBufferMs)]), true)
        }
        if let scheme = url.range(of: "://").map({ url[..<$0.lowerBound].lowercased() }) {
            guard let parsed = URL(string: url) else {
                throw Invalid(description: "'\(url)' is not a valid URL (spaces and quotes must be percent-encoded)")
            }
            if scheme == "file" {
                guard FileManager.default.isReadableFile(atPath: parsed.path) else {
                    throw Invalid(description: "no readable file at \(parsed.path)")
                }
                if parsed.pathExtension.lowercased() == "sdp" { return try sdpLaunch(parsed.path, jitterBufferMs, sound) }
                return (try PipelineTemplate.load("probe-uri").render(["uri": PipelineTemplate.quoted(url)], audio: sound), false)
            }
            guard let host = parsed.host, !host.isEmpty else {
                throw Invalid(description: "'\(url)' has no host; expected e.g. \(scheme)://127.0.0.1:8554/pip")
            }
            if scheme == "rtsp" || scheme == "rtsps" {
                return (try PipelineTemplate.load("probe-rtsp").render([
                    "location": PipelineTemplate.quoted(url), "protocols": transport.rawValue,
                    "latency": String(jitterBufferMs), "buffer_mode": sound ? "none" : "auto"], audio: sound), true)
            }
            if WHEPClient.endpoint(of: url) != nil {
                return (try PipelineTemplate.load("probe-whep").render(["latency": String(jitterBufferMs)], audio: sound), true)
            }
            if scheme == "rtmp" || scheme == "rtmps" {
                return (try PipelineTemplate.load("probe-rtmp").render(["location": PipelineTemplate.quoted(url)], audio: sound), true)
            }
            // HLS: a player's adaptive demuxer, moving along the ladder.
            let template = parsed.pathExtension.lowercased() == "m3u8" ? "probe-hls" : "probe-uri"
            return (try PipelineTemplate.load(template).render(["uri": PipelineTemplate.quoted(url)], audio: sound), true)
        }
        guard FileManager.default.isReadableFile(atPath: url) else {
            throw Invalid(description: "'\(url)' is neither a URL (rtsp://, rtmp://, srt://, file://…) nor a readable file")
        }
        if URL(fileURLWithPath: url).pathExtension.lowercased() == "sdp" { return try sdpLaunch(url, jitterBufferMs, sound) }
        let uri = URL(fileURLWithPath: url).absoluteString
        return (try PipelineTemplate.load("probe-uri").render(["uri": PipelineTemplate.quoted(uri)], audio: sound), false)
    }

    /// An SDP file: the live RTP streams it describes (`run --push rtp://…`), received on its ports.
    static func sdpLaunch(_ path: String, _ jitterBufferMs: Int, _ sound: Bool) throws -> (String, Bool) {
        (try PipelineTemplate.load("probe-sdp").render([
            "location": PipelineTemplate.quoted(path), "latency": String(jitterBufferMs)], audio: sound), true)
    }

    public func start() throws {
        // With sound, both tracks are read in running time: one timeline for the A/V offset.
        let hearing = pipeline.hasElement(named: "audio")
        sink = pipeline.appSink(named: "out", dropWhenFull: false, runningTime: hearing, onSample: { [weak self] buffer, caps in
            self?.sample(buffer, caps)
        }, onEOS: { [weak self] in self?.end(nil) })
        if hearing {
            audioSink = pipeline.appSink(named: "audio", dropWhenFull: false, runningTime: true, onSample: { [weak self] b, c in
                self?.hear(b, c)
            }, onEOS: {})
        }
        guard sink != nil else { throw Invalid(description: "the probe pipeline has no element named 'out'") }
        // An RTSP source's pads are linked here, each by its media (see pipelines/probe-rtsp.pipeline).
        if !decodes {
            // An accounting viewer: the server's codec picks the depayloader, and each has its own appsink.
            pipeline.linkAddedPads(ofElementNamed: "src", byMedia: ["H264": "picture", "VP8": "picture_vp8"], field: "encoding-name")
            vp8Sink = pipeline.appSink(named: "out_vp8", dropWhenFull: false, onSample: { [weak self] buffer, caps in
                self?.sample(buffer, caps)
            }, onEOS: { [weak self] in self?.end(nil) })
        } else if pipeline.hasElement(named: "picture") {
            pipeline.linkAddedPads(ofElementNamed: "src", byMedia: ["video": "picture", "audio": "sound"])
            // rtpbin leaves the tracks as they came when the RTCP sender reports ask for a correction under 4 ms
            // (its min-ts-offset): the A/V offset read 2.7 ms off after some starts and exact after others.
            if hearing {
                pipeline.setOnManager(ofElementNamed: "src", "min-ts-offset", "0")
                // Over WHEP, each track's timestamps from its RTP timestamps alone (probe-rtsp.pipeline's buffer-mode
                // none with --av): with arrival smoothing the offsets read ±3 ms around the source's.
                if WHEPClient.endpoint(of: url) != nil { pipeline.setOnManager(ofElementNamed: "src", "buffer-mode", "none") }
                // That lining up moves the sound's timeline by a step: a jump that is no sound missing.
                // Whichever track it moves, ticks before it were read against tracks not yet lined up.
                pipeline.onStreamShift(ofManagerOf: "src") { [weak self] media, step in
                    guard let self else { return }
                    self.lock.withLock {
                        if media == "audio" { self.ticks.shifted(by: step) }
                        self.av.receiverShifted(by: step)
                    }
                }
            }
        }
        if let endpoint = WHEPClient.endpoint(of: url), let element = pipeline.element(named: "src") {
            defer { gst_object_unref(UnsafeMutableRawPointer(element)) }
            do { whep = try WHEPClient(endpoint: endpoint, webrtc: element, sound: hearing, options: webrtc) } catch {
                throw Invalid(description: error.description)
            }
            // Counting by timestamps: each frame's comes from its RTP timestamp alone, not smoothed by arrival.
            if !decodes, let rtpbin = gst_bin_get_by_name(cgst_bin(element), "rtpbin") {
                gst_util_set_object_arg(cgst_gobject(rtpbin), "buffer-mode", "none")
                gst_object_unref(UnsafeMutableRawPointer(rtpbin))
            }
        }
        if isLive {
            let t = now()
            lock.withLock { stats.startedMs = t }
        }
        do { try pipeline.play { [weak self] event in
            switch event {
            case .error(let e): self?.end(e)
            case .warning(let w):
                // Decoders warn about corrupt data and carry on: each warning is a decode error.
                guard let self else { return }
                if w.element.contains("dec") || w.message.lowercased().contains("decod") {
                    self.lock.withLock { self.stats.decodeError() }
                }
            case .eos: self?.end(nil)
            }
        } } catch {
            _ = pipeline.stop(drain: false, timeout: 1)
            throw error
        }
        // WHEP: the offer is made by the playing webrtcbin; the join time counts from before it.
        do { try whep?.connect() } catch {
            _ = pipeline.stop(drain: false, timeout: 1)
            throw Invalid(description: error.description)
        }
    }

    /// What a WebRTC source's connection got to (ICE's state, the candidates each side offered); nil for others.
    public var connectionDiagnosis: String? { whep?.diagnosis }

    private func sample(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        if !decodes { return account(buffer, caps) }
        let wall = isLive ? now() : 0
        let read = luma.withLuma(buffer, caps: caps) { plane in
            let reading = TimecodeCodec.read(luma: plane.bytes, width: plane.width, height: plane.height, stride: plane.stride)
            let second = lock.withLock { () -> Int in
                // A live frame counts when it arrives; a file's frame from where it starts to where it ends on the
                // file's timeline (a frame without a time follows the one before).
                var arrival = wall, starts: Double?
                if !isLive {
                    let from = buffer.pts.map { Double($0) / 1e6 } ?? fileTimeMs ?? 0
                    starts = from
                    arrival = from + (buffer.duration.map { Double($0) / 1e6 } ?? 0)
                    fileTimeMs = max(fileTimeMs ?? arrival, arrival)
                }
                stats.frame(arrivalMs: arrival, startsMs: starts, width: plane.width, height: plane.height, reading: reading)
                if audioSink != nil, let reading, let pts = buffer.pts { av.frame(reading.frame, pts: pts) }
                return stats.secondIndex(ofArrival: arrival)
            }
            if let comparer, reading == nil { comparer.unreadable() }
            if comparer != nil && reading != nil { readableSeen += 1 }
            // Sampling (a soak) compares the last frame of each period, so the first comparison comes a period
            // after joining, past the key frame the join asked for.
            if let comparer, let reading, readableSeen % compareEvery == 0 {
                comparer.offer(reading: reading, width: plane.width, height: plane.height, second: second) { out in
                    for y in 0..<plane.height {
                        memcpy(out.baseAddress! + y * plane.width, plane.bytes.baseAddress! + y * plane.stride, plane.width)
                    }
                }
            }
        }
        if read == nil { lock.withLock { stats.decodeError() } }
    }

    /// An accounting viewer decodes its frames (true) or only counts them (false): the soak's rotating sample.
    /// Opening makes its decoder and asks the server for a key frame; frames go to the decoder from the first one.
    public func sampling(_ on: Bool) {
        guard !decodes else { return }
        if !on {
            let old = lock.withLock { () -> Pipeline? in
                defer { sampler = nil }
                return sampler?.pipeline
            }
            _ = old?.stop(drain: false, timeout: 2)
            return
        }
        guard lock.withLock({ sampler == nil }) else { return }
        do {
            let p = try Pipeline(name: "sample", launch: try PipelineTemplate.load("probe-sample").render([:]))
            guard let input = p.appSource(named: "in", maxBuffers: Self.sampleQueue),
                  let output = p.appSink(named: "out", dropWhenFull: true, onSample: { [weak self] b, c in self?.samplePicture(b, c) },
                                         onEOS: {}) else {
                _ = p.stop(drain: false, timeout: 1)
                return
            }
            try p.play()
            lock.withLock {
                sampler = (p, input, output)
                samplerCaps = nil
                awaitingKeyFrame = true
                sampleFirstPictureMs = nil
            }
            sink?.requestKeyFrame()
            vp8Sink?.requestKeyFrame()
        } catch {
            lock.withLock { stats.decodeError() }
        }
    }

    /// A picture of the sample: its strip gives a latency (its frame was counted already), and it is compared with
    /// the scene like a decoding viewer's.
    private func samplePicture(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        let wall = now()
        _ = luma.withLuma(buffer, caps: caps) { plane in
            let reading = TimecodeCodec.read(luma: plane.bytes, width: plane.width, height: plane.height, stride: plane.stride)
            let second = lock.withLock { () -> Int in
                let first = sampleFirstPictureMs ?? wall
                sampleFirstPictureMs = first
                stats.sampled(arrivalMs: wall, reading: reading, settling: wall - first < stats.warmupMs)
                return stats.secondIndex(ofArrival: wall)
            }
            guard let comparer else { return }
            guard let reading else { return comparer.unreadable() }
            readableSeen += 1
            if readableSeen % compareEvery == 0 {
                comparer.offer(reading: reading, width: plane.width, height: plane.height, second: second) { out in
                    for y in 0..<plane.height {
                        memcpy(out.baseAddress! + y * plane.width, plane.bytes.baseAddress! + y * plane.stride, plane.width)
                    }
                }
            }
        }
    }

    /// An accounting viewer's frame (one access unit, not decoded): its number is where its timestamp sits after
    /// the first one's, in steps of the frame period (the smallest step between two frames seen), so frames missing
    /// between two are counted as drops and a frame with the same timestamp as a repeat.
    private func account(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        let wall = now()
        lock.withLock {
            // In the sample: the frame to the decoder too, from a key frame on. A decoder that falls behind (its
            // queue nearly full: the machine is loaded) skips to the next key frame, so it never decodes a picture
            // whose reference it lost: the viewer's figures are the stream's, not the instrument's.
            if let sampler {
                if !awaitingKeyFrame && sampler.input.queued >= Self.sampleQueue - 1 { awaitingKeyFrame = true }
                if awaitingKeyFrame && buffer.isKeyFrame && sampler.input.queued < Self.sampleQueue - 1 { awaitingKeyFrame = false }
                if !awaitingKeyFrame {
                    if let caps, samplerCaps.map({ $0 != caps }) ?? true {
                        sampler.input.setCaps(caps)
                        samplerCaps = caps
                    }
                    _ = sampler.input.push(buffer.shallowCopy())
                }
            }
            guard let pts = buffer.pts else { return stats.decodeError() }
            var number: UInt64 = 0
            if let last = counted {
                if pts > last.pts { period = min(period ?? (pts - last.pts), pts - last.pts) }
                let steps = pts > last.pts ? max(1, UInt64((Double(pts - last.pts) / Double(period!)).rounded())) : 0
                number = last.frame + steps
            }
            counted = (pts, number)
            stats.frame(arrivalMs: wall, width: 0, height: 0, reading: TimecodeCodec.Reading(frame: number, wallMilliseconds: 0),
                        timed: false)
        }
    }

    /// Decoded sound (mono 16-bit, as the probe pipeline's caps ask): ticks found go to the A/V figures.
    private func hear(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        guard let pts = buffer.pts else { return }
        let rate = caps?.audioRate ?? 48_000
        _ = buffer.withBytes { raw in
            let samples = raw.bindMemory(to: Int16.self)
            lock.withLock {
                let found = ticks.feed(samples, channels: 1, rate: rate, pts: pts)
                av.heard(upTo: pts + MediaTime(samples.count) * 1_000_000_000 / MediaTime(rate))
                if let jump = ticks.lastJump { av.timelineJumped(at: jump.at, by: jump.by) }
                for o in found { av.onset(o) }
            }
        }
    }

    /// Where the sound's ticks fell against the picture; nil when the stream had no sound.
    public func avSync() -> AVSyncStats.Report? {
        lock.withLock {
            guard ticks.samples > 0 else { return nil }
            return av.report(gaps: ticks.gaps, gapMs: ticks.gapMilliseconds, heardSeconds: Double(ticks.heard) / 1e9)
        }
    }

    /// Ticks placed since `second` (see `AVSyncStats.ticks(after:)`); empty without sound.
    public func avTicks(after second: Int64) -> [AVSyncStats.Tick] {
        lock.withLock { av.ticks(after: second) }
    }

    /// How close the decoded pictures came to the reference (nil without `reference`). Complete after `stop()`.
    public var fidelity: (total: FidelityStats.Total, seconds: [FidelityStats.Second], errors: [String])? {
        comparer?.figures
    }

    /// The latencies counted so far in the exported buckets (`ProbeBuckets.latencySeconds`).
    public var latencyBuckets: BucketCounts { lock.withLock { stats.latencyBuckets } }

    /// The picture fidelity so far and its SSIM buckets; nil without a reference.
    public var runningFidelity: (total: FidelityStats.Total, ssim: BucketCounts)? { comparer?.running }

    /// The probe's clock: the wall clock for a live source, the file's own timeline for a file.
    private func clockNow() -> Double {
        isLive ? now() : lock.withLock { fileTimeMs ?? 0 }
    }

    private func end(_ error: GstError?) {
        let t = clockNow()
        endCondition.lock()
        if !_ended {
            _ended = true
            _failure = error
            endedAt = t
        }
        endCondition.broadcast()
        endCondition.unlock()
    }

    /// The figures so far, with every second up to now closed.
    /// After the stream ended, time stops there: teardown is not counted as seconds without frames.
    public func snapshot() -> (total: ProbeStats.Total, seconds: [ProbeStats.Second]) {
        let t = endCondition.withLock { endedAt } ?? clockNow()
        return lock.withLock {
            stats.roll(to: t)
            return stats.finished()
        }
    }

    /// The last finished second and the run so far (for a live status line).
    public func tick() -> (second: ProbeStats.Second?, total: ProbeStats.Total, latency: LatencySummary?) {
        let t = clockNow()
        return lock.withLock {
            stats.roll(to: t)
            return (stats.lastSecond, stats.total, stats.latencySoFar)
        }
    }

    public var ended: Bool { endCondition.withLock { _ended } }
    public var failure: GstError? { endCondition.withLock { _failure } }

    /// Waits until the stream ends (EOS or an error) or `timeout` passes; true when it ended.
    public func waitUntilEnded(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        endCondition.lock()
        defer { endCondition.unlock() }
        while !_ended { if !endCondition.wait(until: deadline) { return _ended } }
        return true
    }

    /// Tears the pipeline down (no EOS to drain: nothing is written).
    public func stop() {
        sampling(false)
        whep?.end()
        _ = pipeline.stop(drain: false, timeout: 2)
        comparer?.finish()
        end(nil)
    }
}
