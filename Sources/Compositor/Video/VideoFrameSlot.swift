import Foundation

/// The newest picture of a video layer's input, handed from GStreamer's streaming thread to the frame loop: one
/// frame, replaced by the next (latest wins; the frame loop counts what it skipped and repeated), so a fast input
/// never queues and a stalled one never blocks a frame.
///
/// `@unchecked Sendable`: everything is behind `lock`, held only to swap or read a reference.
public final class VideoFrameSlot: @unchecked Sendable {
    public struct Frame: @unchecked Sendable {
        public let buffer: MediaBuffer
        public let size: PixelSize
        /// I420 (a plate: the layer under everything, edge to edge) rather than BGRx.
        public let i420: Bool
        /// Counts frames from the input's start: a jump of more than one is frames the loop never showed.
        public let sequence: UInt64
        /// When the frame reached the slot (monotonic seconds): arrival, for the delay to when it is shown.
        public let arrived: Double
    }

    private let lock = NSLock()
    private var _frame: Frame?
    private var _sequence: UInt64 = 0
    private var _signal = false
    private var _wanted: PixelSize?
    private var onWanted: ((PixelSize) -> Void)?
    private var lastShown: UInt64 = 0
    private var _counts = Counts()

    /// Output frames that showed a new input frame, showed the same one again, and input frames never shown;
    /// the delay (ms) from a frame's arrival to its painting, the last one.
    public struct Counts: Sendable {
        public var shown: UInt64 = 0
        public var repeated: UInt64 = 0
        public var skipped: UInt64 = 0
        public var delayMs: Double?
    }

    public init() {}

    /// A new frame of `size` from the input (streaming thread).
    func put(_ buffer: MediaBuffer, size: PixelSize, i420: Bool = false, at time: Double) {
        lock.withLock {
            _sequence += 1
            _frame = Frame(buffer: buffer, size: size, i420: i420, sequence: _sequence, arrived: time)
            _signal = true
        }
    }

    /// The input is gone (an error, the end of a live stream): the layer shows its placeholder over the last frame.
    func lose() { lock.withLock { _signal = false } }

    public var frame: Frame? { lock.withLock { _frame } }
    public var counts: Counts { lock.withLock { _counts } }

    /// The frame loop is about to show the newest frame in an output frame; returns it (its sequence number is
    /// the layer's appearance), so that everything drawn for this output frame uses the same input frame.
    func showing() -> Frame? {
        lock.withLock {
            let s = _sequence
            guard s > 0 else { return nil }
            if s == lastShown { _counts.repeated += 1 } else {
                if lastShown > 0 && s > lastShown + 1 { _counts.skipped += s - lastShown - 1 }
                lastShown = s
                _counts.shown += 1
            }
            return _frame
        }
    }

    /// A new frame was painted now.
    func painted(_ frame: Frame) {
        let ms = (ProcessInfo.processInfo.systemUptime - frame.arrived) * 1000
        lock.withLock { _counts.delayMs = ms }
    }
    /// A frame came since the input (re)started and it has not been lost since.
    public var hasSignal: Bool { lock.withLock { _signal } }
    public var sequence: UInt64 { lock.withLock { _sequence } }

    /// The size the layer paints at; set by the widget's layout, followed by the input (its scaler's caps).
    public var wanted: PixelSize? { lock.withLock { _wanted } }

    func want(_ size: PixelSize) {
        let tell = lock.withLock { () -> ((PixelSize) -> Void)? in
            guard _wanted != size else { return nil }
            _wanted = size
            return onWanted
        }
        tell?(size)
    }

    /// The input follows `want` from now on.
    func follow(_ handler: @escaping (PixelSize) -> Void) { lock.withLock { onWanted = handler } }
}
