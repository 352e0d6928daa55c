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
/// are not needed. A packet from before the media's time began is dropped.
///
/// Frames keep their exact time too, except the few that cannot: frames drawn while the media was starting wait
/// in appsrc and leave together when it plays, from before its time began; they are placed just after its start,
/// a millisecond apart, and the first frame whose own time is past them has it again. (With a whole frame duration
/// as the step, live frames, exactly one duration apart, would never catch up: every frame of the media would stay
/// late by the first queued frame's age for the life of the media, and the sound, mapped exactly, would read early
/// by as much. Sound had that trouble under that rule, measured at 90 ms, before it was mapped exactly. The same
/// holds after gst-rtsp-server pauses and resumes a media: frames drawn while it was paused leave together.)
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
        let exactDTS = Int64(dts) + shift
        let mappedDTS = Self.place(exactDTS, now: nowRunning, after: last.map { Int64($0) })
        shift += mappedDTS - exactDTS
        last = GstClockTime(mappedDTS)
        let writable = cgst_buffer_make_writable(buffer)!
        cgst_buffer_set_pts_dts(writable, GstClockTime(Int64(pts) + shift), GstClockTime(mappedDTS))
        return .stamped(writable)
    }

    /// Frames that leave together are this far apart at least: distinct RTP timestamps (an RTP client sees equal
    /// timestamps as one frame, ffmpeg as non-monotonic DTS), and short enough that the next live frame, one frame
    /// duration after its predecessor was drawn, is past them and keeps its own time.
    static let step: Int64 = 1_000_000

    /// A frame's DTS in the media's running time, from `exact` (its frame-clock time mapped there): never later
    /// than `now` (a sink that syncs would wait), never before the media's time began (0), and at least `step`
    /// past the frame before (`last`); the first rule gives way to the others.
    static func place(_ exact: Int64, now: Int64, after last: Int64?) -> Int64 {
        let floor = last.map { $0 + step } ?? 0
        return max(min(exact, now), floor)
    }
}
