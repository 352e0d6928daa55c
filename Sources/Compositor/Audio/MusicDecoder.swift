import Foundation

/// One playlist file being decoded (`pipelines/decode-audio.pipeline`): hands each chunk of 48 kHz stereo samples
/// to `onSamples` on GStreamer's streaming thread (which may make it wait: that is how the decoder stays only a
/// little ahead), and says once when the file ended or failed. `stop()` must be called before the last reference
/// goes, from a thread that is not the decoder's own.
final class MusicDecoder: @unchecked Sendable {
    let file: AudioFile
    private let pipeline: Pipeline
    private var sink: AppSink?

    /// Starts decoding `file` from `seconds` into it.
    init(file: AudioFile, template: PipelineTemplate, from seconds: Double,
         onSamples: @escaping (UnsafeBufferPointer<Int16>) -> Void,
         onEnd: @escaping @Sendable (GstError?) -> Void) throws(GstError) {
        self.file = file
        let launch: String
        do { launch = try template.render(["uri": "\"\(PipelineTemplate.quoted(file.uri))\""]) } catch {
            throw GstError(element: "music", message: "\(error)")
        }
        pipeline = try Pipeline(name: "music", launch: launch)
        sink = pipeline.appSink(named: "pcm", dropWhenFull: false, onSample: { buffer, _ in
            buffer.withBytes { raw in onSamples(raw.bindMemory(to: Int16.self)) }
        }, onEOS: { onEnd(nil) })
        guard sink != nil else {
            pipeline.stop(drain: false)
            throw GstError(element: "music", message: "\(template.path) needs 'appsink name=pcm'")
        }
        do {
            if seconds > 0 {
                try pipeline.preroll(timeout: 10)
                _ = pipeline.seek(toSeconds: seconds)
            }
            try pipeline.play { event in
                if case .error(let e) = event { onEnd(e) }
            }
        } catch {
            pipeline.stop(drain: false)
            throw error
        }
    }

    func stop() {
        pipeline.stop(drain: false)
        sink = nil
    }
}
