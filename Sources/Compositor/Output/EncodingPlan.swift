import Foundation

/// The encoders a run uses, found before anything starts: the picture's encoder (x264 or a hardware one) and its
/// pipeline, one pipeline per codec the sound is encoded to, and the music's files with their decoder; and the
/// outputs they will feed that were named on the command line (recordings, pushes, pipelines, HLS rungs), prepared,
/// until `start()` puts them in the topology.
struct EncodingPlan {
    var kind = EncoderSettings.Kind.x264
    /// nil until `make` ran.
    var encoder: PipelineTemplate?
    /// AAC always (with sound); Opus too for MKV when asked, and for browsers (WebRTC, RTP pushes).
    var audio: [AudioCodec: PipelineTemplate] = [:]
    /// The files `--audio FILE` plays and the pipeline that decodes them.
    var music: (files: [AudioFile], template: PipelineTemplate)?
    /// Set by the session once the plan is made (`makeOutputs`, `makeLadder`).
    var outputs: [PipelineOutput] = []

    /// Resolves the encoder and loads every template; appends each pipeline's text to `dump` by name.
    static func make(_ options: LiveOptions, dump: inout [(String, String)],
                     warn: @escaping @Sendable (String) -> Void) throws -> EncodingPlan {
        var plan = EncodingPlan()
        plan.kind = try options.encoder.resolved(warn: warn)
        let template = try PipelineTemplate.load("encode-\(plan.kind == .x264 ? "x264" : plan.kind.rawValue)")
        plan.encoder = template
        dump.append(("encoder", try template.render(options.encoder.values(for: plan.kind, liveSize: options.size,
                                                                            fixed: nil, fps: options.fps))))
        if !options.audio.isSilent {
            var codecs: Set<AudioCodec> = [.aac, options.mkvAudioCodec]
            if options.webrtc != nil || options.rtpPushes.contains(where: { $0.audioPort != nil }) || options.pushesWHIP {
                codecs.insert(.opus)
            }
            for codec in codecs.sorted(by: { $0.rawValue < $1.rawValue }) {
                let t = try PipelineTemplate.load(codec.templateName)
                plan.audio[codec] = t
                dump.append(("audio-\(codec)", try t.render(["bitrate": "128000"])))
            }
        }
        if case .music(let source) = options.audio {
            let files = try Playlist.load(source, warn: warn)
            let t = try PipelineTemplate.load("decode-audio")
            plan.music = (files, t)
            dump.append(("music", try t.render(["uri": "\"\(PipelineTemplate.quoted(files[0].uri))\""])))
        }
        return plan
    }
}
