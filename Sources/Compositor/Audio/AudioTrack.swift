import Foundation

/// The audio track: samples drawn on the frame clock's timeline by the frame loop, encoded once per codec in use
/// (`AudioEncoder`: AAC always, Opus when asked), each packet handed to every output that takes that codec.
///
/// Sample n is at n / 48000 s of running time, the frames' timeline: audio and picture share one clock by
/// construction, and a resize never touches the track. The frame loop draws up to the time of the frame it
/// just sent, so no packet is stamped later than now (an RTSP media maps timestamps to its own running time
/// and would hold a packet from the future).
///
/// `@unchecked Sendable`: `written` is only touched by the frame loop thread (`advance`) and by `finish` after
/// the loop ended; the encoders are set in `init` and are thread-safe themselves.
public final class AudioTrack: @unchecked Sendable {
    public typealias Subscriber = (_ buffer: MediaBuffer, _ caps: MediaCaps?) -> Void
    public static let rate = 48_000
    public static let channels = 2
    static let rawCaps = "audio/x-raw,format=S16LE,layout=interleaved,rate=\(rate),channels=\(channels)"

    public let choice: AudioChoice
    private let signal: any AudioSignal
    private let encoders: [AudioCodec: AudioEncoder]
    private var written: Int64 = 0

    /// `offsetMilliseconds` moves the sound against the picture by a known amount (`--inject-av-offset-ms`);
    /// `music` is the player of `--audio FILE` (required for `.music`); `templates` has one encoder pipeline per
    /// codec to encode to (AAC at least).
    public init(choice: AudioChoice, offsetMilliseconds: Double, templates: [AudioCodec: PipelineTemplate],
                bitrate: Int = 128_000, music: MusicPlayer? = nil, warn: @escaping @Sendable (String) -> Void,
                onError: @escaping @Sendable (GstError) -> Void) throws {
        self.choice = choice
        switch choice {
        case .none:
            throw AudioChoice.Invalid(description: "internal: no audio track for --audio none")
        case .ticks:
            signal = TickSignal(rate: Self.rate, offsetMilliseconds: offsetMilliseconds)
        case .tone(let hz):
            signal = ToneSignal(rate: Self.rate, hz: hz)
        case .music:
            guard let music else { throw AudioChoice.Invalid(description: "internal: music without a player") }
            signal = music
        }
        var encoders: [AudioCodec: AudioEncoder] = [:]
        do {
            for (codec, template) in templates.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                encoders[codec] = try AudioEncoder(codec: codec, template: template, bitrate: bitrate,
                                                   rawCaps: Self.rawCaps, rate: Self.rate, warn: warn, onError: onError)
            }
        } catch {
            for e in encoders.values { _ = e.finish(timeout: 1) }
            throw error
        }
        self.encoders = encoders
    }

    /// The launch text of each encoder, by codec.
    public var launches: [(AudioCodec, String)] { encoders.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key, $0.value.launch) } }

    /// Draws the samples from where the track is up to running time `time` and hands them to every encoder.
    /// Called on the frame loop thread after each frame; a late loop that skipped frames gets one longer chunk,
    /// so the track never has a hole.
    public func advance(to time: MediaTime) {
        let end = Self.sample(at: time)
        guard end > written else { return }
        let frames = Int(end - written)
        let bytes = frames * Self.channels * 2
        guard let buffer = MediaBuffer.filled(bytes: bytes, { raw in
            signal.fill(raw.bindMemory(to: Int16.self), from: written)
        }) else { return }
        let pts = Self.time(ofSample: written)
        buffer.stamp(pts: pts, duration: Self.time(ofSample: end) - pts)
        written = end
        for e in encoders.values { e.push(buffer) }
    }

    /// The sample nearest running time `time` (frame times are whole nanoseconds; no overflow for years).
    static func sample(at time: MediaTime) -> Int64 {
        let s = time / 1_000_000_000, ns = time % 1_000_000_000
        return Int64(s) * Int64(rate) + Int64((ns * MediaTime(rate) + 500_000_000) / 1_000_000_000)
    }

    static func time(ofSample n: Int64) -> MediaTime {
        let s = MediaTime(n) / MediaTime(rate), rest = MediaTime(n) % MediaTime(rate)
        return s * 1_000_000_000 + rest * 1_000_000_000 / MediaTime(rate)
    }

    /// Holds every packet `milliseconds` before the outputs get it, as the video encoder does for
    /// `--inject-delay-ms`: the delay applies to the whole stream, not to one track.
    public func delay(by milliseconds: Double) {
        guard milliseconds > 0 else { return }
        for e in encoders.values { e.delay(by: milliseconds) }
    }

    /// Packets of `codec` go to `handler` from now on (AAC when the track has no encoder for it).
    public func subscribe(_ owner: AnyObject, codec: AudioCodec = .aac, _ handler: @escaping Subscriber) {
        (encoders[codec] ?? encoders[.aac])?.subscribe(owner, handler)
    }

    public func unsubscribe(_ owner: AnyObject) {
        for e in encoders.values { e.unsubscribe(owner) }
    }

    /// The codecs encoded.
    public var codecs: [AudioCodec] { encoders.keys.sorted { $0.rawValue < $1.rawValue } }
    /// AAC packets encoded (the codec every track has).
    public var encodedPackets: UInt64 { encoders[.aac]?.packets ?? 0 }
    public var encodedBytes: UInt64 { encoders.values.reduce(0) { $0 + $1.bytes } }
    /// Sample chunks an encoder had no room for (dropped before encoding), all encoders.
    public var dropped: UInt64 { encoders.values.reduce(0) { $0 + $1.dropped } }

    /// Draws the track up to `time` (the end of the last frame), drains the encoders to the subscribers, stops.
    @discardableResult
    public func finish(at time: MediaTime, timeout: TimeInterval = 5) -> Bool {
        advance(to: time)
        return encoders.values.reduce(true) { $1.finish(timeout: timeout) && $0 }
    }
}
