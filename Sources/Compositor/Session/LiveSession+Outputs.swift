import Foundation

/// Remembers the last viewer count, to tell a join from a leave.
///
/// `@unchecked Sendable`: `last` is only read and written under `lock`.
final class ViewerCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var last = 0
    func update(_ n: Int) -> Bool { lock.withLock { defer { last = n }; return n > last } }
}

/// How the session makes its outputs from what the user asked for: the RTSP server, and a recording's, push's or
/// pipeline's `PipelineOutput` from its template, with sound when the stream has some and events to the bus.
extension LiveSession {
    func makeRTSPOutput(_ endpoint: RTSPEndpoint) throws -> RTSPOutput {
        let events = self.events
        let counter = ViewerCounter()
        return try RTSPOutput(endpoint: endpoint, template: try PipelineTemplate.load("rtsp-media"),
                              title: options.scene.title, audio: !options.audio.isSilent, onViewers: { n in
            events.publish(counter.update(n) ? .viewerJoined(.rtsp(viewers: n)) : .viewerLeft(.rtsp(viewers: n)))
        })
    }

    /// The output for `spec` from its pipeline file, not yet started; `location` overrides a recording's path
    /// (the numbered files of a split recording); `rendition` names the picture it carries (its id ends `@WxH`).
    func makePipelineOutput(_ spec: OutputSpec, index: Int, location override: String?,
                            rendition: PixelSize? = nil) throws -> PipelineOutput {
        let tags = PipelineTemplate.titleTags(options.scene.title)
        let suffix = rendition.map { "@\($0)" } ?? ""
        let out: PipelineOutput
        switch spec {
        case .record(let path, let format, _):
            let location = override ?? path
            out = PipelineOutput(id: "record:\(location)\(suffix)", spec: spec,
                                 template: try PipelineTemplate.load("record-\(format.rawValue)"),
                                 values: ["location": PipelineTemplate.quoted(location)],
                                 maxQueued: options.fps * 2, audio: soundCodec(format == .mkv ? options.mkvAudioCodec : .aac),
                                 log: log)
        case .push(let url, "rtp"):
            let target = try rtpTarget(url)
            out = PipelineOutput(id: "push:\(url)\(suffix)", spec: spec, template: try PipelineTemplate.load("push-rtp"),
                                 values: ["host": PipelineTemplate.quoted(target.host), "port": String(target.videoPort),
                                          "rtcp_port": String(target.videoPort + 1),
                                          "bind_address": target.host.contains(":") ? "::" : "0.0.0.0",
                                          "audio_port": String(target.audioPort ?? 0),
                                          "audio_rtcp_port": String((target.audioPort ?? 0) + 1),
                                          "pt": String(target.videoPayloadType), "audio_pt": String(target.audioPayloadType)],
                                 maxQueued: options.fps / 2, audio: target.audioPort == nil ? nil : .opus, log: log)
        case .push(let url, let scheme):
            out = PipelineOutput(id: "push:\(url)\(suffix)", spec: spec, template: try PipelineTemplate.load("push-\(scheme)"),
                                 values: ["location": PipelineTemplate.quoted(url)],
                                 maxQueued: options.fps / 2, audio: soundCodec(.aac), log: log)
        case .custom(let path):
            out = PipelineOutput(id: "pipeline:\(URL(fileURLWithPath: path).lastPathComponent)#\(index)\(suffix)", spec: spec,
                                 template: try PipelineTemplate.load(path: path),
                                 values: ["tags": tags, "title": PipelineTemplate.quoted(options.scene.title)],
                                 maxQueued: options.fps, audio: soundCodec(.aac), log: log)
        case .hls(let folder, let rung):
            let window = options.hls ?? HLSSettings(folder: folder, windowSeconds: HLSSettings.defaultWindow)
            out = PipelineOutput(id: "hls:\(folder)/\(rung)", spec: spec, template: try PipelineTemplate.load("record-hls"),
                                 values: ["segments": PipelineTemplate.quoted("\(folder)/\(rung)/segment%05d.ts"),
                                          "playlist": PipelineTemplate.quoted("\(folder)/\(rung)/index.m3u8"),
                                          "length": String(window.playlistLength), "max_files": String(window.maxFiles)],
                                 maxQueued: options.fps * 2, audio: soundCodec(.aac), log: log)
        case .rtsp:
            throw OutputSpec.Invalid(description: "internal: rtsp is not a pipeline output")
        }
        out.title = options.scene.title
        out.rendition = rendition
        if let audio { out.hear(audio) }
        let events = self.events
        out.onEvent = { events.publish($0) }
        return out
    }

    /// An RTP push's target, checked against what this run makes: browsers behind Janus decode only constrained
    /// baseline H.264, and `?audio=` needs sound encoded as Opus.
    func rtpTarget(_ url: String) throws -> RTPTarget {
        let target = try RTPTarget.parse(url)
        // x264's ultrafast is constrained baseline by itself; other presets and hardware encoders only when pinned.
        if !options.encoder.constrainedBaseline && (options.encoder.preset != "ultrafast" || encoderKind != .x264) {
            let made = encoderKind == .x264 ? "--preset \(options.encoder.preset)" : "--encoder \(encoderKind.rawValue)"
            throw OutputSpec.Invalid(description: "cannot push to '\(url)': this run's encoder (\(made)) is not pinned to "
                                     + "constrained baseline, the only H.264 browsers behind an RTP receiver such as Janus "
                                     + "decode; give the rtp:// push when run starts (it pins it), or use x264's --preset ultrafast")
        }
        guard target.audioPort != nil else { return target }
        if options.audio.isSilent {
            throw OutputSpec.Invalid(description: "cannot push to '\(url)': ?audio= asks for sound but the stream has "
                                     + "none; drop ?audio=, or start run with --audio ticks|tone|FILE")
        }
        if audioTemplates[.opus] == nil {
            throw OutputSpec.Invalid(description: "cannot push to '\(url)': this run encodes no Opus (RTP carries its "
                                     + "sound as Opus); give the rtp:// push with ?audio= when run starts, or start "
                                     + "run with --webrtc or --audio-codec opus")
        }
        return target
    }

    /// The codec an output takes its sound in; nil when the stream is silent.
    func soundCodec(_ codec: AudioCodec) -> AudioCodec? { options.audio.isSilent ? nil : codec }
}
