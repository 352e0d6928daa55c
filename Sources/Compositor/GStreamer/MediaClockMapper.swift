import CGst
import Foundation

/// Stamps the buffers leaving an RTSP media's appsrc with the time they were rendered, in that media's own
/// running time, so RTP timestamps follow the frame clock (steady, one step a frame, never twice the same).
///
/// Buffers arrive stamped with the frame clock's running time; the frame clock and every media pipeline run
/// on GStreamer's monotonic system clock, so `frameClockBase + pts` is the absolute time a frame was drawn,
/// and subtracting the media's base time gives its running time there. The mapping is made as each buffer
/// leaves appsrc (a pad probe on its streaming thread), when the media is playing and its base time is known;
/// it is redone for every buffer, so a media paused and resumed by gst-rtsp-server stays right.
///
/// Sound is mapped `exact`ly: packets are evenly spaced and always in the past, so the rules for frames below
/// are not needed, and the first of them would hold every packet after a burst at the media's start one step
/// later for good (measured: 90 ms of A/V offset). A packet from before the media's time began is dropped.
///
/// `@unchecked Sendable`: `last` is only touched on the appsrc's streaming thread (the pad probe).
final class MediaClockMapper: @unchecked Sendable {
    private let frameClockBase: @Sendable () -> MediaTime?
    private let exact: Bool
    /// Only touched on the appsrc's streaming thread.
    private var last: GstClockTime?

    init(frameClockBase: @escaping @Sendable () -> MediaTime?, exact: Bool = false) {
        self.frameClockBase = frameClockBase
        self.exact = exact
    }

    /// Installs the probe on `appsrc`'s source pad; the probe keeps this mapper alive until the pad goes.
    func attach(to appsrc: UnsafeMutablePointer<GstElement>) {
        guard let pad = gst_element_get_static_pad(appsrc, "src") else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        let probe: GstPadProbeCallback = { pad, info, data in
            guard let info, let data, let pad else { return GST_PAD_PROBE_OK }
            let mapper = Unmanaged<MediaClockMapper>.fromOpaque(data).takeUnretainedValue()
            guard let raw = info.pointee.data else { return GST_PAD_PROBE_OK }
            let buffer = raw.assumingMemoryBound(to: GstBuffer.self)
            guard let parent = gst_pad_get_parent_element(pad) else { return GST_PAD_PROBE_OK }
            defer { gst_object_unref(UnsafeMutableRawPointer(parent)) }
            switch mapper.restamp(buffer, element: parent) {
            case .keep: break
            case .drop: return GST_PAD_PROBE_DROP
            case .stamped(let stamped): info.pointee.data = UnsafeMutableRawPointer(stamped)
            }
            return GST_PAD_PROBE_OK
        }
        let destroy: GDestroyNotify = { data in Unmanaged<MediaClockMapper>.fromOpaque(data!).release() }
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, probe, Unmanaged.passRetained(self).toOpaque(), destroy)
    }

    enum Outcome {
        case keep, drop
        case stamped(UnsafeMutablePointer<GstBuffer>)
    }

    /// The buffer (made writable) with PTS and DTS in the media's running time; `.keep` leaves it as it is.
    private func restamp(_ buffer: UnsafeMutablePointer<GstBuffer>, element: UnsafeMutablePointer<GstElement>) -> Outcome {
        let none = cgst_clock_time_none()
        let pts = cgst_buffer_pts(buffer)
        guard pts != none, let base = frameClockBase(), let clock = gst_element_get_clock(element) else { return .keep }
        let now = Int64(gst_clock_get_time(clock))
        gst_object_unref(UnsafeMutableRawPointer(clock))
        let mediaBase = Int64(gst_element_get_base_time(element))
        let nowRunning = now - mediaBase
        guard nowRunning >= 0 else { return .keep }
        let dts = cgst_buffer_dts(buffer) == none ? pts : cgst_buffer_dts(buffer)
        var shift = Int64(base) - mediaBase
        if exact {
            guard Int64(dts) + shift >= 0 else { return .drop }
            let writable = cgst_buffer_make_writable(buffer)!
            cgst_buffer_set_pts_dts(writable, GstClockTime(Int64(pts) + shift), GstClockTime(Int64(dts) + shift))
            return .stamped(writable)
        }
        // Never later than now (a sink that syncs would wait), never before the media's time began (frames drawn
        // while it was starting wait in appsrc and leave together), and at least one frame duration past the last
        // buffer: the frames queued at the start are spaced out instead of sharing one timestamp (an RTP client
        // sees equal timestamps as one frame, ffmpeg as non-monotonic DTS). The first rule gives way to the last.
        var mappedDTS = Int64(dts) + shift
        if mappedDTS > nowRunning { shift -= mappedDTS - nowRunning; mappedDTS = nowRunning }
        var floor: Int64 = 0
        if let last {
            let duration = buffer.pointee.duration
            floor = Int64(last) + (duration == none || duration == 0 ? 1_000_000 : Int64(duration))
        }
        if mappedDTS < floor { shift += floor - mappedDTS; mappedDTS = floor }
        last = GstClockTime(mappedDTS)
        let writable = cgst_buffer_make_writable(buffer)!
        cgst_buffer_set_pts_dts(writable, GstClockTime(Int64(pts) + shift), GstClockTime(mappedDTS))
        return .stamped(writable)
    }
}
