import CGst
import Foundation

/// Key frames wanted at a given frame, granted at that frame.
///
/// A force-key-unit event that names a running time does not work with x264enc in GStreamer 1.22: the video
/// encoder base class compares it with its frames' times after x264enc's 1000-hour minimum PTS is added, so such a
/// request is granted at the very next frame (whatever time it named) or, once any key frame was forced, never.
/// A viewer joining through a slow link (its PLAY arriving a few hundred ms after the key frame its media started on)
/// then waited for the next regular key frame: up to a second of pictures GStreamer clients decode as grey.
///
/// The schedule watches each frame entering the encoder (a buffer probe on its sink pad, on the streaming thread)
/// and, at the first one at or after the wanted running time, asks the encoder for a key frame now: the encoder
/// grants a timeless request to the next frame it takes, which is that one.
///
/// `@unchecked Sendable`: `due` is behind `lock`; the pads are only used through GStreamer's thread-safe calls.
final class KeyFrameSchedule: @unchecked Sendable {
    private let lock = NSLock()
    private var due: MediaTime?
    private let source: UnsafeMutablePointer<GstPad>

    /// Watches the frames entering the element named `name` in `pipeline`; nil when there is no such element with
    /// static "sink" and "src" pads.
    init?(encoderNamed name: String, in pipeline: Pipeline) {
        guard let encoder = pipeline.element(named: name) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(encoder)) }
        guard let src = gst_element_get_static_pad(encoder, "src") else { return nil }
        guard let sink = gst_element_get_static_pad(encoder, "sink") else {
            gst_object_unref(UnsafeMutableRawPointer(src))
            return nil
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(sink)) }
        source = src
        let probe: GstPadProbeCallback = { pad, info, data in
            guard let pad, let info, let data, let buffer = cgst_probe_info_first_buffer(info) else { return GST_PAD_PROBE_OK }
            Unmanaged<KeyFrameSchedule>.fromOpaque(data).takeUnretainedValue().frame(buffer, on: pad)
            return GST_PAD_PROBE_OK
        }
        let destroy: GDestroyNotify = { data in Unmanaged<KeyFrameSchedule>.fromOpaque(data!).release() }
        let types = GstPadProbeType(rawValue: GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue)
        gst_pad_add_probe(sink, types, probe, Unmanaged.passRetained(self).toOpaque(), destroy)
    }

    deinit { gst_object_unref(UnsafeMutableRawPointer(source)) }

    /// The first frame whose running time is `runningTime` or later will be a key frame (the earliest of the
    /// times asked for, when several are).
    func request(at runningTime: MediaTime) {
        lock.withLock { due = min(due ?? runningTime, runningTime) }
    }

    /// Withdraws the request for `runningTime` if it is still the one due (an earlier key frame served it).
    func cancel(ifDueAt runningTime: MediaTime) {
        lock.withLock { if due == runningTime { due = nil } }
    }

    private func frame(_ buffer: UnsafeMutablePointer<GstBuffer>, on pad: UnsafeMutablePointer<GstPad>) {
        guard lock.withLock({ due }) != nil, let time = PadTime.runningTime(of: buffer, on: pad) else { return }
        let now = lock.withLock { () -> Bool in
            guard let wanted = due, time >= wanted else { return false }
            due = nil
            return true
        }
        // Handled in this thread, before the encoder takes the buffer: the request applies to this frame.
        if now { gst_pad_send_event(source, gst_video_event_new_upstream_force_key_unit(cgst_clock_time_none(), 1, 0)) }
    }
}
