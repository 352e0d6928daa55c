/// A codec the sound is encoded to. Each one in use has one encoder for the whole process (`AudioEncoder`); an
/// output takes the packets of the codec its container carries.
public enum AudioCodec: String, Sendable, CaseIterable, CustomStringConvertible {
    /// MP4, TS, FLV (RTMP), SRT, RTSP, and MKV by default.
    case aac
    /// MKV when asked (`--audio-codec opus`).
    case opus

    public var description: String { rawValue }

    /// The encoder's pipeline in `pipelines/`.
    var templateName: String { "encode-\(rawValue)" }

    /// The parser an output's `[audio]` chain puts before its muxer (`{audio_parse}`).
    var parser: String {
        switch self {
        case .aac: "aacparse"
        case .opus: "opusparse"
        }
    }

    /// Samples each encoder puts before the first input sample, by element factory (measured here: a tick drawn at
    /// sample 0 decodes at sample 1024 from avenc_aac and 1600 from voaacenc, through mp4mux, matroskamux and
    /// mpegtsmux; opusenc marks its own lookahead as pre-skip, which decoders drop, so nothing is to move).
    static let primingSamples = ["avenc_aac": 1024, "voaacenc": 1600, "opusenc": 0]

    /// `aac` or `opus`.
    public static func parse(_ text: String) throws(AudioChoice.Invalid) -> AudioCodec {
        guard let c = AudioCodec(rawValue: text.lowercased()) else {
            throw AudioChoice.Invalid(description: "invalid --audio-codec '\(text)': expected aac or opus")
        }
        return c
    }
}
