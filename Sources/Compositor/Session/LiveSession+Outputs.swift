import Foundation

/// Remembers the last viewer count, to tell a join from a leave.
///
/// `@unchecked Sendable`: `last` is only read and written under `lock`.
final class ViewerCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var last = 0
    func update(_ n: Int) -> Bool { lock.withLock { defer { last = n }; return n > last } }
}

/// How the session makes its outputs from what the user asked for: a recording's, push's or pipeline's
/// `PipelineOutput` from its template, with sound when the stream has some and events to the bus; the servers
/// (the RTSP server and its renditions' paths, WebRTC, the HLS ladder); the encoders that feed them.
extension LiveSession {
    /// The recordings, pushes and pipelines of the command line, prepared; the RTSP server (`--rtsp`) and its
    /// renditions' paths go into `servers`.
    func makeOutputs(dump: inout [(String, String)]) throws -> [PipelineOutput] {
        var outputs: [PipelineOutput] = []
        for (i, spec) in options.outputs.enumerated() {
            if case .rtsp(let endpoint) = spec {
                guard servers.first(RTSPOutput.self) == nil else {
                    throw OutputSpec.Invalid(description: "only one --rtsp endpoint per process")
                }
                let main = try makeRTSPOutput(endpoint)
                dump.append(("rtsp \(endpoint.url)", main.mediaLaunch))
                // Each rendition at its own path of the same server; the paths end before the main one, whose
                // output stops the server.
                let template = try PipelineTemplate.load("rtsp-media")
                for r in options.renditions.sorted(by: { ($0.size.width, $0.size.height) < ($1.size.width, $1.size.height) }) {
                    servers.add(try RTSPOutput(rendition: r.size, of: main, template: template))
                }
                servers.add(main)
                continue
            }
            let out = try makePipelineOutput(spec, index: i, location: nil, rendition: options.outputRenditions[i])
            guard !outputs.contains(where: { $0.id == out.id }) else {
                throw OutputSpec.Invalid(description: "\(out.id) is given twice")
            }
            if let clash = outputs.first(where: { spec.sharesRTPPort(with: $0.spec) }) {
                throw OutputSpec.Invalid(description: "\(out.id) sends to a port \(clash.id) sends to too; its "
                                         + "receiver would mix the two streams: give each push its own ports")
            }
            dump.append((out.id, try out.prepare()))
            outputs.append(out)
        }
        return outputs
    }

    /// The HLS ladder (`--hls`): one rung per picture, the main one, then each rendition from the largest down, and
    /// the master playlist that lists them.
    func makeLadder(adding outputs: inout [PipelineOutput], dump: inout [(String, String)]) throws {
        guard let hls = options.hls else { return }
        let sizes: [PixelSize?] = [nil] + options.renditions.map(\.size).sorted { $0.width * $0.height > $1.width * $1.height }
        var rungs: [HLSMaster.Rung] = []
        for size in sizes {
            let name = HLSSettings.rung(size)
            try FileManager.default.createDirectory(atPath: hls.folder + "/" + name, withIntermediateDirectories: true)
            let out = try makePipelineOutput(.hls(folder: hls.folder, rung: name), index: outputs.count, location: nil,
                                             rendition: size)
            dump.append((out.id, try out.prepare()))
            outputs.append(out)
            let kbps = size.map { s in options.encoder.bitrate(forRendition: options.renditions.first { $0.size == s }!,
                                                              fps: options.fps) }
                ?? options.encoder.bitrate(for: options.size, fps: options.fps)
            rungs.append(HLSMaster.Rung(name: name, output: out, size: size ?? options.size, kbps: kbps))
        }
        servers.add(writer: HLSMaster(folder: hls.folder, rungs: rungs, fps: options.fps,
                                      audioKbps: options.audio.isSilent ? nil : 128, log: log))
    }

    /// WHEP viewers (`--webrtc`): the fan-out to browsers, VP8 for those without H.264 when it can be made, and the
    /// renditions made for their windows.
    func makeWebRTC(dump: inout [(String, String)]) throws {
        guard let settings = options.webrtc else { return }
        let fan = try PipelineTemplate.load("webrtc"), viewer = try PipelineTemplate.load("webrtc-viewer")
        var vp8: (branch: PipelineTemplate, viewer: PipelineTemplate, values: [String: String])?
        if Gst.hasElement("vp8enc") && Gst.hasElement("avdec_h264") {
            let values = ["bitrate_bps": String(options.encoder.bitrate(for: options.size, fps: options.fps) * 1000),
                          "keyint": String(options.encoder.keyInterval > 0 ? options.encoder.keyInterval : options.fps * 2)]
            vp8 = (try PipelineTemplate.load("webrtc-vp8"), try PipelineTemplate.load("webrtc-viewer-vp8"), values)
        } else {
            log("warning: vp8enc or avdec_h264 is missing: WebRTC viewers without H.264 will be refused")
        }
        let events = self.events
        servers.add(try WebRTCOutput(template: fan, viewerTemplate: viewer, vp8: vp8, audio: !options.audio.isSilent,
                                     addresses: settings.addresses, ice: settings.ice,
                                     maxViewers: settings.maxViewers, connectTimeout: settings.connectTimeout,
                                     frameClockBase: { [weak self] in self?.loop?.clock.baseTime },
                                     onEvent: { events.publish($0) }))
        servers.windows = BrowserRenditions(limit: settings.maxRenditions)
        dump.append(("webrtc", try WebRTCOutput.launch(template: fan, vp8: vp8, audio: !options.audio.isSilent)))
        dump.append(("webrtc viewer", try viewer.render(["pt": "PT"])))
        if let vp8 { dump.append(("webrtc viewer (VP8)", try vp8.viewer.render(["pt": "PT"]))) }
    }

    /// An encoder for frames of `liveSize` (what the render size is, or becomes at a resize), letterboxed into
    /// `fixed` when given; `settings` other than the run's for a rendition's own bitrate.
    func makeEncoder(fixed: PixelSize?, liveSize: PixelSize, rawCaps: String, settings: EncoderSettings? = nil) throws -> Encoder {
        guard let template = plan.encoder else { throw GstError(element: "encoder", message: "internal: not prepared") }
        let e = try Encoder(template: template, settings: settings ?? options.encoder, kind: plan.kind,
                            liveSize: liveSize, fixedSize: fixed, fps: options.fps, rawCaps: rawCaps,
                            onError: { [log] e in log("encoder \(fixed.map { "\($0)" } ?? "live"): \(e)") })
        e.delay(by: options.injectDelayMs, fps: options.fps)
        return e
    }

    /// Each rendition's picture, handed to the frame loop, and its encoder, at its own bitrate (the size's default
    /// without one). The loop draws a rendition while an output carries it or a server's viewer takes it.
    func makeRenditions(_ loop: FrameLoop) throws -> [PixelSize: Encoder] {
        var encoders: [PixelSize: Encoder] = [:]
        var pictures: [RenditionPicture] = []
        var scene = options.scene
        scene.fps = options.fps
        do {
            for r in options.renditions {
                let picture = try RenditionPicture(scene: scene, size: r.size, fps: options.fps, warn: { _ in })
                picture.share(renderer)
                // Drawn once now, as the main picture is: its first live frame, when a viewer asks, is not late.
                picture.warmUp()
                var settings = options.encoder
                // Its own bitrate, or its size's default (not the main picture's --bitrate).
                settings.bitrate = r.bitrateKbps ?? 0
                encoders[r.size] = try makeEncoder(fixed: nil, liveSize: r.size, rawCaps: picture.caps, settings: settings)
                pictures.append(picture)
            }
        } catch {
            for e in encoders.values { e.finish(timeout: 2) }
            throw error
        }
        loop.renditions = pictures
        let running = self.running, servers = self.servers, browser = servers.windows
        loop.renditionEncoders = {
            guard let graph = running.value else { return [:] }
            var wanted = graph.watched
            // And those viewers see, or wait for a key frame of (a browser's may be one made for its window).
            for size in servers.wantedRenditions { wanted[size] = graph.renditions[size] ?? browser?.encoders[size] }
            return wanted
        }
        return encoders
    }

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
        case .push(let url, "whip"):
            out = PipelineOutput(id: "push:\(url)\(suffix)", spec: spec, template: try PipelineTemplate.load("push-whip"),
                                 values: [:], maxQueued: options.fps / 2, audio: soundCodec(.opus), log: log)
            out.whipLogin = (ProcessInfo.processInfo.environment["PIPCOMPOSE_WHIP_TOKEN"], options.webrtc?.ice ?? options.whipIce)
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
        if !options.encoder.constrainedBaseline && (options.encoder.preset != "ultrafast" || plan.kind != .x264) {
            let made = plan.kind == .x264 ? "--preset \(options.encoder.preset)" : "--encoder \(plan.kind.rawValue)"
            throw OutputSpec.Invalid(description: "cannot push to '\(url)': this run's encoder (\(made)) is not pinned to "
                                     + "constrained baseline, the only H.264 browsers behind an RTP receiver such as Janus "
                                     + "decode; give the rtp:// push when run starts (it pins it), or use x264's --preset ultrafast")
        }
        guard target.audioPort != nil else { return target }
        if options.audio.isSilent {
            throw OutputSpec.Invalid(description: "cannot push to '\(url)': ?audio= asks for sound but the stream has "
                                     + "none; drop ?audio=, or start run with --audio ticks|tone|FILE")
        }
        if plan.audio[.opus] == nil {
            throw OutputSpec.Invalid(description: "cannot push to '\(url)': this run encodes no Opus (RTP carries its "
                                     + "sound as Opus); give the rtp:// push with ?audio= when run starts, or start "
                                     + "run with --webrtc or --audio-codec opus")
        }
        return target
    }

    /// The codec an output takes its sound in; nil when the stream is silent.
    func soundCodec(_ codec: AudioCodec) -> AudioCodec? { options.audio.isSilent ? nil : codec }
}
