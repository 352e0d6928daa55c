import Foundation

/// One file of a render (`pipelines/render-file.pipeline`): frames and sound pushed in, each push waiting while the
/// encoder or the muxer is busy. A pipeline that fails (a full disk) is stopped at once, so a push never waits for it
/// forever, and says why.
///
/// `@unchecked Sendable`: `error` and `finished` are behind `lock`; the rest is set in `init`.
final class RenderFile: @unchecked Sendable {
    let path: String
    private let pipeline: Pipeline
    private let frames: AppSource
    private let audio: AppSource?
    private let lock = NSLock()
    private var _error: String?
    private var finished = false
    private var audioCaps = false

    /// A file of pictures of `size`, at `bitrate` kbit/s at most (0: the size's default).
    init(path: String, size: PixelSize, bitrate: Int, settings: SceneRender.Settings, audio withAudio: Bool) throws {
        self.path = path
        var encoder = EncoderSettings()
        encoder.bitrate = bitrate
        let launch = try PipelineTemplate.load("render-file").render([
            "preset": settings.preset, "bitrate": String(encoder.bitrate(for: size, fps: settings.fps)),
            "keyint": String(settings.fps), "threads": "0", "muxer": try SceneRender.muxer(for: path),
            "location": PipelineTemplate.quoted(path),
        ], audio: withAudio)
        pipeline = try Pipeline(name: "render-" + URL(fileURLWithPath: path).lastPathComponent, launch: launch)
        guard let frames = pipeline.appSource(named: "frames", maxBuffers: 4, leaky: false) else {
            pipeline.stop(drain: false)
            throw GstError(element: "render", message: "pipelines/render-file.pipeline needs 'appsrc name=frames'")
        }
        self.frames = frames
        // About ten seconds of AAC packets: the sound runs ahead of the picture by the encoder's look-ahead.
        audio = withAudio ? pipeline.appSource(named: "audio", maxBuffers: 512, leaky: false) : nil
        for source in [frames] + (audio.map { [$0] } ?? []) {
            source.set("is-live", "false")
            source.set("block", "true")
        }
        try frames.setCaps(FrameProducer.caps(size: size, fps: settings.fps))
        try pipeline.play { [weak self] event in
            if case .error(let e) = event { self?.failed(e.description) }
        }
    }

    var error: String? { lock.withLock { _error } }
    /// Neither failed nor given up.
    var isWriting: Bool { lock.withLock { _error == nil && !finished } }

    private func failed(_ message: String) {
        let first = lock.withLock { () -> Bool in
            defer { if _error == nil { _error = message } }
            return _error == nil && !finished
        }
        // Off the bus thread (stopping waits for it): NULL flushes the appsrcs, and a waiting push returns.
        if first { DispatchQueue.global().async { [pipeline] in pipeline.stop(drain: false) } }
    }

    /// A frame, after the encoder took the ones before enough to make room.
    func push(_ buffer: MediaBuffer) throws {
        guard error == nil, frames.push(buffer) else {
            throw SceneRender.Refusal(description: "'\(path)': \(error ?? "its pipeline stopped")")
        }
    }

    /// An AAC packet from the render's sound (on the audio encoder's thread).
    func push(sound buffer: MediaBuffer, caps: MediaCaps?) {
        guard let audio, error == nil else { return }
        if !audioCaps, let caps {
            audio.setCaps(caps)
            audioCaps = true
        }
        audio.push(buffer)
    }

    /// Ends both tracks and waits for the file to be written whole; false when it was not.
    func finish() -> Bool {
        frames.endOfStream()
        audio?.endOfStream()
        let ended = error == nil && pipeline.waitForEOS(timeout: 120)
        lock.withLock { finished = true }
        pipeline.stop(drain: false)
        return ended && error == nil
    }

    /// Stops a file the render did not finish (it failed before): it keeps what was written.
    func abandon() {
        guard !lock.withLock({ finished }) else { return }
        lock.withLock { finished = true }
        pipeline.stop(drain: false)
    }
}
