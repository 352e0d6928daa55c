import CGst
import Foundation

/// Owns a reference to an `appsink` and hands each sample's buffer and caps to a closure on the streaming
/// thread, through `gst_app_sink_set_callbacks` (cheaper than signals). Made by `Pipeline.appSink(named:…)`.
///
/// `@unchecked Sendable`: the element is only used through GStreamer's thread-safe calls.
public final class AppSink: @unchecked Sendable {
    /// Called on the streaming thread with each buffer and its caps. With `runningTime`, the buffer is a copy
    /// stamped with its running time in the sample's segment (encoders shift their own timestamps: x264enc adds
    /// 1000 hours less its first input time; the running time undoes that).
    public typealias Handler = (_ buffer: MediaBuffer, _ caps: MediaCaps?) -> Void

    final class Box {
        let onSample: Handler
        let onEOS: () -> Void
        let runningTime: Bool
        /// The last caps handed out, so a sample with the same caps reuses the wrapper.
        var caps: MediaCaps?
        init(onSample: @escaping Handler, onEOS: @escaping () -> Void, runningTime: Bool) {
            self.onSample = onSample
            self.onEOS = onEOS
            self.runningTime = runningTime
        }

        func deliver(_ buffer: UnsafeMutablePointer<GstBuffer>, _ caps: UnsafeMutablePointer<GstCaps>?,
                     _ segment: UnsafeMutablePointer<GstSegment>?) {
            var wrapped: MediaCaps?
            if let caps {
                if let last = self.caps, last.pointer == caps { wrapped = last } else {
                    wrapped = MediaCaps(retaining: caps)
                    self.caps = wrapped
                }
            }
            let b = MediaBuffer(retaining: buffer)
            guard runningTime, let segment else { return onSample(b, wrapped) }
            let none = cgst_clock_time_none()
            let pts = cgst_buffer_pts(buffer), dts = cgst_buffer_dts(buffer)
            let rpts = AppSink.runningTime(pts, in: segment)
            let rdts = dts == none ? rpts : AppSink.runningTime(dts, in: segment)
            let out = rpts == none ? nil : MediaTime(rpts)
            onSample(b.restamped(pts: out, dts: rdts == none || rdts > rpts ? out : MediaTime(rdts)), wrapped)
        }
    }

    /// A timestamp's running time, also for one outside the segment (`gst_segment_to_running_time` answers NONE
    /// there, and a frame without a timestamp fails a muxer): negative running times become 0.
    static func runningTime(_ time: GstClockTime, in segment: UnsafeMutablePointer<GstSegment>) -> GstClockTime {
        guard time != cgst_clock_time_none() else { return time }
        var out: guint64 = 0
        let sign = gst_segment_to_running_time_full(segment, GST_FORMAT_TIME, guint64(time), &out)
        return sign > 0 ? GstClockTime(out) : 0
    }

    let element: UnsafeMutablePointer<GstElement>

    /// `dropWhenFull`: with 4 samples waiting, drop the oldest (an encoder's consumers must never hold it up);
    /// false makes upstream wait instead (a probe must not lose frames it would then report as the stream's).
    init(takingOwnership element: UnsafeMutablePointer<GstElement>, dropWhenFull: Bool = true, runningTime: Bool,
         onSample: @escaping Handler, onEOS: @escaping () -> Void) {
        self.element = element
        gst_util_set_object_arg(cgst_gobject(UnsafeMutableRawPointer(element)), "sync", "false")
        gst_util_set_object_arg(cgst_gobject(UnsafeMutableRawPointer(element)), "max-buffers", "4")
        gst_util_set_object_arg(cgst_gobject(UnsafeMutableRawPointer(element)), "drop", dropWhenFull ? "true" : "false")
        var callbacks = GstAppSinkCallbacks()
        callbacks.eos = { _, data in
            Unmanaged<Box>.fromOpaque(data!).takeUnretainedValue().onEOS()
        }
        callbacks.new_sample = { sink, data in
            guard let sink, let sample = gst_app_sink_pull_sample(sink) else { return GST_FLOW_OK }
            defer { gst_sample_unref(sample) }
            if let buffer = gst_sample_get_buffer(sample) {
                Unmanaged<Box>.fromOpaque(data!).takeUnretainedValue()
                    .deliver(buffer, gst_sample_get_caps(sample), gst_sample_get_segment(sample))
            }
            return GST_FLOW_OK
        }
        let box = Unmanaged.passRetained(Box(onSample: onSample, onEOS: onEOS, runningTime: runningTime)).toOpaque()
        gst_app_sink_set_callbacks(cgst_app_sink(element), &callbacks, box, { data in
            Unmanaged<Box>.fromOpaque(data!).release()
        })
    }

    deinit {
        gst_object_unref(UnsafeMutableRawPointer(element))
    }

    /// Asks the encoder upstream for a key frame now (a viewer joined, an output switched streams).
    public func requestKeyFrame() {
        // Upstream events given to a sink element travel up from its sink pad to the encoder.
        let event = gst_video_event_new_upstream_force_key_unit(cgst_clock_time_none(), 1, 0)
        gst_element_send_event(element, event)
    }
}
