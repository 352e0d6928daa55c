import Foundation

/// One picture of a video layer's source, for `snapshot`: the same pipeline as a live input
/// (`pipelines/video-input.pipeline`, scaled to the layer), run until its first frame. A file is sought to the
/// snapshot's scene time first (within its length when it loops); a live source gives whatever comes first.
public enum VideoStill {
    public struct Failed: Error, CustomStringConvertible {
        public let description: String
    }

    /// Puts the picture in `widget`'s slot, as its input would; throws (with GStreamer's reason) when none came
    /// within `timeout` seconds.
    public static func grab(into widget: VideoWidget, at seconds: Double, timeout: TimeInterval = 10) throws {
        let size = widget.slot.wanted ?? PixelSize(width: 320, height: 180)
        let template = try PipelineTemplate.load("video-input")
        let launch = try VideoInput.launch(template: template, source: widget.config.source, fit: widget.config.fit, size: size,
                                           i420: widget.isPlate)
        let pipeline = try Pipeline(name: "still:\(widget.id)", launch: launch)
        let got = DispatchSemaphore(value: 0)
        let first = Latest<(MediaBuffer, PixelSize, Bool)?>(nil)
        let sink = pipeline.appSink(named: "frames", onSample: { buffer, caps in
            guard let size = caps?.videoSize, first.value == nil else { return }
            first.value = (buffer, size, caps?.videoFormat == "I420")
            got.signal()
        }, onEOS: { got.signal() })
        guard sink != nil else {
            pipeline.stop(drain: false)
            throw Failed(description: "\(template.path) needs 'appsink name=frames'")
        }
        pipeline.set("sync", "false", onElementNamed: "frames")
        defer { pipeline.stop(drain: false) }
        let errors = Latest<String?>(nil)
        if widget.config.source.isFile {
            try pipeline.preroll(timeout: timeout)
            if seconds > 0, let length = pipeline.durationSeconds, length > 0 {
                let target = widget.config.loop ? seconds.truncatingRemainder(dividingBy: length) : min(seconds, length)
                _ = pipeline.seek(toSeconds: target)
            }
        }
        try pipeline.play { event in
            if case .error(let e) = event {
                errors.value = e.message
                got.signal()
            }
        }
        guard got.wait(timeout: .now() + timeout) == .success, let (buffer, frameSize, i420) = first.value else {
            throw Failed(description: errors.value ?? "no picture from \(widget.config.source) within \(Int(timeout)) s")
        }
        widget.slot.put(buffer, size: frameSize, i420: i420, at: ProcessInfo.processInfo.systemUptime)
    }
}
