import ArgumentParser
import Compositor
import Foundation

// Options several commands take, declared once with their checks (`@OptionGroup`). Each group's `validate()` runs
// once, before the command's own; the typed value is read from the group where it is used.

/// `--size WxH`.
struct SizeOption: ParsableArguments {
    @Option(help: "Picture size WIDTHxHEIGHT, even numbers up to 7680x4320 (default: the scene's; soak: 640x360).")
    var size: String?

    func validate() throws { _ = try value() }

    func value() throws -> PixelSize? {
        guard let size else { return nil }
        do { return try RenderSize.parse(size) } catch { throw ValidationError(error.description) }
    }
}

/// `--fps N`.
struct FrameRateOption: ParsableArguments {
    @Option(help: "Frames per second, 1...120 (default: the scene's; soak: 30).")
    var fps: Int?

    func validate() throws {
        if let fps, !(1...120).contains(fps) { throw ValidationError("--fps must be 1...120, got \(fps)") }
    }
}

/// `--duration SECONDS`.
struct DurationOption: ParsableArguments {
    @Option(help: "Stop after this many seconds (run: finalizing the outputs; probe: default until the stream ends or Ctrl-C; soak: default 60).")
    var duration: Double?

    func validate() throws {
        if let duration, !(duration > 0 && duration.isFinite) {
            throw ValidationError("--duration must be a positive number of seconds, got \(duration)")
        }
    }
}

/// `--transport tcp|udp` of an RTSP client (probe, soak's viewers).
struct TransportOption: ParsableArguments {
    @Option(help: "RTSP transport: tcp or udp.")
    var transport: String = "tcp"

    func validate() throws { _ = try value() }

    func value() throws -> Probe.Transport {
        guard let t = Probe.Transport(rawValue: transport) else {
            throw ValidationError("--transport must be tcp or udp, got '\(transport)'")
        }
        return t
    }
}

/// The H.264 encoder's settings.
struct EncoderOptions: ParsableArguments {
    @Option(help: "H.264 encoder: auto (hardware when present, else x264), x264, vaapi, nvenc.")
    var encoder: String = "x264"

    @Option(help: "x264 speed preset (ultrafast … veryslow).")
    var preset: String = "ultrafast"

    @Option(help: "Bitrate in kbit/s (default: from the picture size).")
    var bitrate: Int?

    @Option(help: "Frames between key frames (default: one second).")
    var keyint: Int?

    @Option(help: "x264 threads, 1...16; 0 lets x264 choose from the machine's cores.")
    var encoderThreads: Int = 0

    func validate() throws { _ = try settings() }

    func settings() throws -> EncoderSettings {
        var s = EncoderSettings()
        guard let kind = EncoderSettings.Kind(rawValue: encoder) else {
            throw ValidationError("--encoder must be one of \(EncoderSettings.Kind.allCases.map(\.rawValue).joined(separator: ", ")), got '\(encoder)'")
        }
        guard EncoderSettings.presets.contains(preset) else {
            throw ValidationError("--preset must be one of \(EncoderSettings.presets.joined(separator: ", ")), got '\(preset)'")
        }
        if let bitrate, !(50...200_000).contains(bitrate) { throw ValidationError("--bitrate must be 50...200000 kbit/s") }
        if let keyint, !(1...1000).contains(keyint) { throw ValidationError("--keyint must be 1...1000 frames") }
        guard (0...16).contains(encoderThreads) else {
            throw ValidationError("--encoder-threads must be 0...16 (0: x264 chooses), got \(encoderThreads)")
        }
        s.kind = kind
        s.preset = preset
        s.bitrate = bitrate ?? 0
        s.keyInterval = keyint ?? 0
        s.threads = encoderThreads
        return s
    }
}
