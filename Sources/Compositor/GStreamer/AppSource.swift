import CGst
import Foundation

/// Owns a reference to an `appsrc` element and pushes buffers into it. Made by `Pipeline.appSource(named:)`.
///
/// Live configuration by default: time format, live, a bounded queue of `maxBuffers` that drops the oldest
/// buffer when full (the producer never stalls, memory never grows). Drops are counted here because appsrc
/// 1.22 does not count them.
/// `@unchecked Sendable`: appsrc's push, caps and end-of-stream calls are thread-safe in GStreamer; the counters
/// here are behind a lock.
public final class AppSource: @unchecked Sendable {
    let element: UnsafeMutablePointer<GstElement>
    var appsrc: UnsafeMutablePointer<GstAppSrc> { cgst_app_src(element) }
    public let maxBuffers: Int
    private let lock = NSLock()
    private var _dropped: UInt64 = 0
    private var _pushed: UInt64 = 0

    /// Takes the reference `gst_bin_get_by_name` returned.
    init(takingOwnership element: UnsafeMutablePointer<GstElement>, maxBuffers: Int = 2, leaky: Bool = true) {
        self.element = element
        self.maxBuffers = maxBuffers
        set("format", "time")
        set("is-live", "true")
        set("max-bytes", "0")
        set("max-time", "0")
        set("max-buffers", String(maxBuffers))
        set("block", "false")
        if leaky { set("leaky-type", "downstream") }
    }

    /// Calls `handler` (on a streaming thread) when an element downstream asks for a key frame (an upstream
    /// force-key-unit event, as rtpbin sends on a receiver's PLI).
    func onKeyFrameRequest(_ handler: @escaping () -> Void) {
        guard let pad = gst_element_get_static_pad(element, "src") else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        Pipeline.probeUpstreamKeyUnit(on: pad, handler)
    }

    deinit {
        gst_object_unref(UnsafeMutableRawPointer(element))
    }

    /// Sets a property from its string form, as gst-launch would.
    public func set(_ property: String, _ value: String) {
        gst_util_set_object_arg(cgst_gobject(UnsafeMutableRawPointer(element)), property, value)
    }

    /// New caps, queued in order with the buffers: a resize is `setCaps` then the next push.
    public func setCaps(_ text: String) throws(GstError) {
        guard let caps = gst_caps_from_string(text) else {
            throw GstError(element: "appsrc", message: "invalid caps '\(text)'")
        }
        gst_app_src_set_caps(appsrc, caps)
        gst_caps_unref(caps)
    }

    public func setCaps(_ caps: MediaCaps) {
        gst_app_src_set_caps(appsrc, caps.pointer)
    }

    public var queued: Int { Int(gst_app_src_get_current_level_buffers(appsrc)) }
    public var dropped: UInt64 { lock.withLock { _dropped } }
    public var pushed: UInt64 { lock.withLock { _pushed } }

    /// Pushes a buffer. A full queue drops its oldest buffer and counts one drop. False when appsrc refused it
    /// (stopped, or at end of stream).
    @discardableResult
    public func push(_ buffer: MediaBuffer) -> Bool {
        let full = queued >= maxBuffers
        let r = gst_app_src_push_buffer(appsrc, buffer.passRetained())
        lock.withLock {
            _pushed += 1
            if full { _dropped += 1 }
        }
        return r == GST_FLOW_OK
    }

    /// Pushes a buffer, first waiting until the queue has room or `deadline` passes (then the oldest queued
    /// buffer is dropped and counted, as `push` does). Needs `watchRoom()` first.
    @discardableResult
    public func push(_ buffer: MediaBuffer, waitingUntil deadline: Date) -> Bool {
        room.lock()
        while queued >= maxBuffers && room.wait(until: deadline) {}
        room.unlock()
        return push(buffer)
    }

    /// Restamps buffers as they leave into the running time of the pipeline this appsrc is in (an RTSP media),
    /// from the frame clock's; see `MediaClockMapper`.
    /// `exact` for sound (see `MediaClockMapper`).
    public func mapTimestamps(exact: Bool = false, frameClockBase: @escaping @Sendable () -> MediaTime?) {
        MediaClockMapper(frameClockBase: frameClockBase, exact: exact).attach(to: element)
    }

    private let room = NSCondition()
    private var watching = false

    /// Wakes `push(_:waitingUntil:)` whenever a buffer leaves the queue (a probe on appsrc's source pad).
    public func watchRoom() {
        guard !lock.withLock({ defer { watching = true }; return watching }) else { return }
        guard let pad = gst_element_get_static_pad(element, "src") else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        let probe: GstPadProbeCallback = { _, _, data in
            let room = Unmanaged<NSCondition>.fromOpaque(data!).takeUnretainedValue()
            room.lock()
            room.broadcast()
            room.unlock()
            return GST_PAD_PROBE_OK
        }
        let destroy: GDestroyNotify = { data in Unmanaged<NSCondition>.fromOpaque(data!).release() }
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, probe, Unmanaged.passRetained(room).toOpaque(), destroy)
    }

    /// No more buffers: EOS flows downstream after the queued ones.
    public func endOfStream() {
        gst_app_src_end_of_stream(appsrc)
    }
}
