import CProcess
import Foundation
import Metrics

/// The render loop: at each frame time it asks the `FrameProducer` for the frame (drawn and converted only
/// where it changed, or the previous buffer again), stamps it with the frame clock's running time and hands
/// it to every encoder.
///
/// `@unchecked Sendable`: the renderer and producer are used only on the loop thread; commands, picture requests, the pending size and the counters are behind `lock`; the public hooks are set before `start()`.
public final class FrameLoop: @unchecked Sendable {
    public struct Stats: Sendable, Equatable {
        /// Frames drawn (wholly or in part).
        public var rendered: UInt64 = 0
        /// Frames sent again unchanged.
        public var repeated: UInt64 = 0
        /// Frames skipped because the loop was late (counted as dropped).
        public var late: UInt64 = 0
        /// Frames left out on purpose (`dropPattern`), not counted as dropped.
        public var injected: UInt64 = 0
        /// Frames of the main picture neither drawn nor encoded because nobody took it (no output, no viewer).
        public var idle: UInt64 = 0
        public var size = PixelSize(width: 0, height: 0)
        public var frame: Int64 = 0
        /// Frames drawn for each rendition (`--rendition`), wholly, in part or sent again unchanged.
        public var renditionFrames: [PixelSize: UInt64] = [:]
        /// Frames that got a buffer of their own because every buffer of their picture's pool was still in use
        /// downstream (`FramePool`): what an encoder that fell behind cost, in memory given back after.
        public var unpooled: UInt64 = 0
    }

    public let renderer: Renderer
    public let clock: FrameClock
    /// How late the loop may fall before it skips frames instead of catching up: as long as it waits for an encoder
    /// that is behind (`encoderWaitLimit`), so that a frame the loop waited for is never followed by frames thrown
    /// away for that wait. It was four frames: everything on at once on two busy cores (bench/everything.sh) lost
    /// 4 to 33 frames at a time, nearly always as a browser window or a web page's new launch started beside it.
    static let catchUpLimit: TimeInterval = 1
    /// How long a drawn frame waits for room before an encoder that is behind: a live encoder starting over at
    /// 4K takes a few hundred milliseconds. Waiting longer than this, the encoder's oldest frame is dropped.
    static let encoderWaitLimit: TimeInterval = 1
    /// Scene time under play/pause/skip.
    public let playback: Playback
    /// Work for the loop thread, run before the next frame: widget updates must not race with drawing. Changes for a
    /// stated moment stay here until it comes.
    private var commands: [SceneChange] = []
    /// The frame whose commands the loop took last, and its scene time: a change for a stated moment must come after.
    private var taken: (frame: Int64, media: Double) = (-1, -1)
    /// Changes waiting for their moment, at most.
    public static let scheduledLimit = 1024
    /// The changes made to widgets so far, the newest for each widget and set of properties, in order: a rendition
    /// made later replays them and shows what the others show. Only touched on the loop thread.
    private var changeLog = SceneChangeLog()
    /// Renditions to add before the next frame (made on demand while running), and sizes to drop, each with what
    /// to call once the loop no longer draws it.
    private var adoptions: [RenditionPicture] = []
    private var retirements: [(size: PixelSize, done: () -> Void)] = []
    /// Who waits for a copy of the picture last sent (`lastPicture`).
    private var pictureRequests: [(ImageSurface?) -> Void] = []
    private var ended = false
    /// Records how long producing each frame took (drawing and conversion).
    public var renderTimer: Metrics.Timer?
    /// The live RTSP viewer count, read each frame.
    public var viewers: (@Sendable () -> Int)?
    /// Called on the loop thread after the first frame went out.
    public var onFirstFrame: (@Sendable () -> Void)?
    /// Called on the loop thread after each frame went to the encoders, with its running time: the audio track
    /// draws its samples up to there (set before `start`).
    public var afterFrame: ((MediaTime) -> Void)?
    /// Frames to leave out on purpose (set before `start`).
    public var dropPattern: DropPattern?
    /// The renditions, each drawn with its own layout at the main picture's frame times: set before `start`, then
    /// changed only on the loop thread (`adopt`, `retire`).
    public var renditions: [RenditionPicture] = []
    /// The encoders of the renditions some output carries now, read each frame: the others are not drawn.
    public var renditionEncoders: (@Sendable () -> [PixelSize: Encoder])?
    /// Whether anyone takes the main picture now (an output, a viewer), read each frame; nil: always. A frame
    /// nobody takes is neither drawn nor encoded (set before `start`).
    public var mainWanted: (@Sendable () -> Bool)?
    public let duration: Double?
    private let lock = NSLock()
    private var producer: FrameProducer
    private var pendingSize: PixelSize?
    private var stopRequested = false
    private var _stats = Stats()
    /// Buffers made outside the pools of producers that are gone (the main picture's before a resize, renditions
    /// retired). Loop thread only.
    private var unpooledBefore: UInt64 = 0
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    /// The encoders to feed, read each frame.
    private let encoders: @Sendable () -> [Encoder]
    /// Called on the loop thread before the first frame of a new size goes out, with the new raw caps.
    private let willResize: (PixelSize, String, MediaTime) -> Void
    private let log: @Sendable (String) -> Void

    public init(renderer: Renderer, fps: Int, duration: Double?, playback: Playback,
                encoders: @escaping @Sendable () -> [Encoder],
                willResize: @escaping (PixelSize, String, MediaTime) -> Void, log: @escaping @Sendable (String) -> Void) throws {
        self.renderer = renderer
        self.playback = playback
        clock = FrameClock(fps: fps)
        self.duration = duration
        producer = try FrameProducer(size: renderer.size, fps: fps)
        self.encoders = encoders
        self.willResize = willResize
        self.log = log
        _stats.size = renderer.size
    }

    public var rawCaps: String { lock.withLock { producer.caps } }
    public var stats: Stats { lock.withLock { _stats } }

    /// Asks for a new render size; applied before the next frame (the render-size callback runs there).
    public func requestResize(_ size: PixelSize) {
        lock.withLock { pendingSize = size }
    }

    /// Runs `command` on the loop thread before the next frame, with the scene time of that frame, on the main
    /// picture only: for reading what the renderer holds, never for changing it (see `change`).
    public func perform(_ command: @escaping (Renderer, Double) -> Void) {
        lock.withLock { commands.append(SceneChange(widget: nil, properties: [], apply: command)) }
    }

    /// Changes `properties` of widget `widget` on the loop thread before the next frame, in the main picture and
    /// every rendition alike, and keeps the change for renditions made later.
    public func change(widget: String, properties: Set<String>, _ apply: @escaping (Renderer, Double) -> Void) {
        lock.withLock { commands.append(SceneChange(widget: widget, properties: properties, apply: apply)) }
    }

    /// A change refused: its moment is too near to be met (`earliest` can be), or too many wait.
    public enum ScheduleRefusal: Error, Sendable {
        case tooNear(earliest: ChangeMoment)
        case full(limit: Int)
    }

    /// `change` held until `moment`: applied before the first frame at or past it, in the main picture and every
    /// rendition alike, so every output, rendition and recording shows it first in the same frame; `landed` is told
    /// which (on the loop thread). Refused when the loop has taken the changes of that frame already.
    public func change(widget: String, properties: Set<String>, at moment: ChangeMoment,
                       landed: @escaping (Int64) -> Void, _ apply: @escaping (Renderer, Double) -> Void)
        throws(ScheduleRefusal) {
        let refusal = lock.withLock { () -> ScheduleRefusal? in
            switch moment {
            case .frame(let f) where f <= taken.frame: return .tooNear(earliest: .frame(taken.frame + 1))
            case .sceneTime(let t) where t <= taken.media: return .tooNear(earliest: .frame(taken.frame + 1))
            default: break
            }
            guard commands.filter({ $0.moment != nil }).count < Self.scheduledLimit else {
                return .full(limit: Self.scheduledLimit)
            }
            commands.append(SceneChange(widget: widget, properties: properties, apply: apply, moment: moment,
                                        landed: landed))
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Draws `picture` from the next frame on, after replaying every change made to the widgets so far into it.
    public func adopt(_ picture: RenditionPicture) {
        lock.withLock { adoptions.append(picture) }
    }

    /// Stops drawing the rendition of `size`; `done` is called on the loop thread once it is out.
    public func retire(_ size: PixelSize, then done: @escaping () -> Void) {
        let now = lock.withLock { () -> Bool in
            if ended { return true }
            retirements.append((size, done))
            return false
        }
        if now { done() }
    }

    /// Calls `done` on the loop thread, before the next frame, with a copy of the picture of the last frame sent:
    /// exactly what viewers see, widget updates included. Nil before the first frame or after the loop ended.
    public func lastPicture(_ done: @escaping (ImageSurface?) -> Void) {
        let now = lock.withLock { () -> Bool in
            if ended { return true }
            pictureRequests.append(done)
            return false
        }
        if now { done(nil) }
    }

    /// Running time now, in seconds.
    public var runningSeconds: Double { Double(clock.runningTime) / 1e9 }

    public func start() {
        clock.start()
        let t = Thread { [self] in
            // Foundation on Linux does not name the OS thread: named here, it shows in top -H, perf and /proc.
            cproc_name_this_thread("frame-loop")
            run()
            // Nobody waits for a picture forever once there are no more frames.
            let (waiting, retired) = lock.withLock { () -> ([(ImageSurface?) -> Void], [(size: PixelSize, done: () -> Void)]) in
                ended = true
                defer { pictureRequests = []; retirements = [] }
                return (pictureRequests, retirements)
            }
            for w in waiting { w(nil) }
            for r in retired { r.done() }
            finished.signal()
        }
        t.name = "frame-loop"
        t.qualityOfService = .userInteractive
        thread = t
        t.start()
    }

    /// Stops after the frame in progress and waits for the loop to end.
    public func stop() {
        lock.withLock { stopRequested = true }
        waitUntilFinished()
    }

    /// Blocks until the loop ends (its duration reached, or `stop`).
    public func waitUntilFinished() {
        guard thread != nil else { return }
        finished.wait()
        finished.signal()
    }

    private func run() {
        let frameNs = clock.frameNanoseconds
        var n: Int64 = 0
        var sentFirst = false
        /// Whether the last frame of the main picture was drawn and sent (its picture is what viewers see now).
        var drawing = false
        while true {
            if lock.withLock({ stopRequested }) { break }
            var target = clock.time(ofFrame: n)
            if let duration, Double(target) / 1e9 >= duration - 1e-9 { break }
            // A finite scene ends at its end.
            if n > 0 && playback.ended(frame: n) { break }
            let now = clock.wait(until: target)
            // Copies of the last picture, before anything changes it (a resize replaces the canvas). With nobody
            // watching there is no such picture: this frame is drawn for them below, not encoded.
            var pictures = lock.withLock { () -> [(ImageSurface?) -> Void] in
                defer { pictureRequests = [] }
                return pictureRequests
            }
            if drawing {
                for p in pictures { p(try? producer.copyOfPicture(renderer)) }
                pictures = []
            }
            // A hiccup (the thread scheduled late, the machine busy for a moment, an encoder that made the loop
            // wait) is caught up: the missed frames are drawn at once with their own timestamps, and recordings keep
            // every one; viewers get them late for that moment. Only a real stall, more than `catchUpLimit` behind,
            // skips frames, and counts them as dropped.
            if now > target + UInt64(Self.catchUpLimit * 1e9) {
                let behind = Int64((now - target) / frameNs)
                n += behind
                target = clock.time(ofFrame: n)
                lock.withLock { _stats.late += UInt64(behind) }
            }
            // Read a pending resize after the wait, not before it: a request that came in while waiting goes
            // into this frame, not the next one (one frame interval less from request to picture).
            let resize = lock.withLock { () -> PixelSize? in
                defer { pendingSize = nil }
                return pendingSize
            }
            if let resize, resize != renderer.size {
                do {
                    let fresh = try FrameProducer(size: resize, fps: clock.fps)
                    willResize(resize, fresh.caps, MediaTime(target))
                    renderer.resize(to: resize)
                    for e in encoders() { try e.setRawCaps(fresh.caps) }
                    unpooledBefore += producer.pool.oneOffs
                    lock.withLock {
                        producer = fresh
                        _stats.size = resize
                    }
                } catch {
                    log("resize to \(resize) failed: \(error); keeping \(renderer.size)")
                }
            }
            // Scene time from the frame number, n ÷ fps, as a reference drawing of frame n computes it: the running
            // time in whole nanoseconds is truncated for two frames in three at 30 fps, and a ticker whose text lands
            // on a half pixel at that size (the info panel at 320x180) was rounded the other way then, so a fresh
            // drawing of the same frame differed in 76 of 120 frames.
            let media = playback.media(frame: n)
            let (pending, adopted, retired) = lock.withLock { () -> ([SceneChange], [RenditionPicture], [(size: PixelSize, done: () -> Void)]) in
                defer { adoptions = []; retirements = [] }
                let due = commands.filter { $0.isDue(frame: n, media: media) }
                commands.removeAll { $0.isDue(frame: n, media: media) }
                taken = (n, media)
                return (due, adoptions, retirements)
            }
            for r in retired {
                unpooledBefore += renditions.filter { $0.size == r.size }.reduce(0) { $0 + $1.producer.pool.oneOffs }
                renditions.removeAll { $0.size == r.size }
                lock.withLock { _ = _stats.renditionFrames.removeValue(forKey: r.size) }
                r.done()
            }
            for picture in adopted where !renditions.contains(where: { $0.size == picture.size }) {
                changeLog.replay(into: picture.renderer)
                renditions.append(picture)
            }
            // Every rendition gets the same changes before the same frame (the main picture first: a change may
            // read what it holds, and then apply the same to the others).
            for c in pending {
                c.apply(renderer, media)
                guard c.widget != nil else { continue }
                for r in renditions { c.apply(r.renderer, media) }
                changeLog.record(c, at: media)
                c.landed?(n)
            }
            // The wall time the frame is due at, to the millisecond, as the timecode strip records it. A frame drawn
            // late (caught up after a hiccup) shows and carries the moment it stands for, as its timestamp does, so
            // a viewer's latency for it counts the hiccup. A clock showing milliseconds shows the strip's value (ICU
            // rounds to the nearest millisecond), and a reference render from the strip is the same picture.
            let running = clock.runningTime, unix = Date().timeIntervalSince1970
            let behind = running > target ? Double(running - target) / 1e9 : 0
            let wall = Date(timeIntervalSince1970: ((unix - behind) * 1000).rounded(.down) / 1000)
            let time = FrameTime(frame: n, media: media, wall: wall, paused: playback.isPaused,
                                 viewers: viewers?() ?? 0)
            let wanted = mainWanted?() ?? true
            // The main picture is drawn when someone takes it, or when a copy of it was asked for (then not encoded).
            var drawn: MediaBuffer?
            if wanted || !pictures.isEmpty {
                do {
                    let started = DispatchTime.now().uptimeNanoseconds
                    let (b, fresh) = try producer.produce(renderer, at: time)
                    renderTimer?.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - started))
                    drawn = b
                    lock.withLock { if fresh { _stats.rendered += 1 } else { _stats.repeated += 1 } }
                } catch {
                    log("frame \(n): \(error)")
                    n += 1
                    continue
                }
                for p in pictures { p(try? producer.copyOfPicture(renderer)) }
            }
            let dropped = dropPattern?.drops(n) ?? false
            // An encoder that is behind makes the loop wait (bounded) rather than lose a drawn frame.
            let deadline = Date().addingTimeInterval(Self.encoderWaitLimit)
            if wanted, let buffer = drawn {
                buffer.stamp(pts: MediaTime(target), duration: MediaTime(frameNs))
                // The encoders saw nothing while nobody watched: whoever watches now starts with this frame.
                if !drawing && sentFirst { for e in encoders() { e.requestKeyFrame(at: MediaTime(target)) } }
                drawing = true
                if dropped {
                    lock.withLock { _stats.injected += 1 }
                } else {
                    for e in encoders() { e.push(buffer, waitingUntil: deadline) }
                }
            } else {
                // Nobody takes the main picture: only the renditions someone takes, and the sound, go on.
                drawing = false
                lock.withLock { _stats.idle += 1 }
            }
            drawRenditions(at: time, pts: MediaTime(target), duration: MediaTime(frameNs), dropped: dropped, deadline: deadline)
            afterFrame?(MediaTime(target))
            let unpooled = renditions.reduce(unpooledBefore + producer.pool.oneOffs) { $0 + $1.producer.pool.oneOffs }
            lock.withLock {
                _stats.frame = n
                _stats.unpooled = unpooled
            }
            if wanted && !sentFirst {
                sentFirst = true
                onFirstFrame?()
            }
            n += 1
        }
    }

    /// Draws each rendition some output carries at the main picture's frame time and hands it to its encoder; a
    /// rendition nobody carries costs nothing. A frame the drop pattern leaves out is left out of every rendition.
    private func drawRenditions(at time: FrameTime, pts: MediaTime, duration: MediaTime, dropped: Bool, deadline: Date) {
        guard !renditions.isEmpty else { return }
        let wanted = renditionEncoders?() ?? [:]
        for r in renditions {
            guard let encoder = wanted[r.size] else {
                r.drawing = false
                continue
            }
            do {
                let (b, drawn) = try r.producer.produce(r.renderer, at: time)
                b.stamp(pts: pts, duration: duration)
                // Its encoder saw nothing while nobody watched: whoever watches now starts with this frame.
                if !r.drawing { encoder.requestKeyFrame(at: pts) }
                r.drawing = true
                if drawn { r.rendered += 1 } else { r.repeated += 1 }
                if !dropped { encoder.push(b, waitingUntil: deadline) }
                lock.withLock { _stats.renditionFrames[r.size, default: 0] += 1 }
            } catch {
                log("rendition \(r.size), frame \(time.frame): \(error)")
            }
        }
    }
}
