import CGst
import Foundation

/// Owns a reference to an `appsink` and hands each sample's buffer and caps to a closure on the streaming
/// thread, through `gst_app_sink_set_callbacks` (cheaper than signals).
public final class AppSink: @unchecked Sendable {
    /// Called on the streaming thread with a borrowed buffer, its caps and segment.
    public typealias Handler = (_ buffer: UnsafeMutablePointer<GstBuffer>, _ caps: UnsafeMutablePointer<GstCaps>?,
                                _ segment: UnsafeMutablePointer<GstSegment>?) -> Void

    final class Box {
        let onSample: Handler
        let onEOS: () -> Void
        init(onSample: @escaping Handler, onEOS: @escaping () -> Void) {
            self.onSample = onSample
            self.onEOS = onEOS
        }
    }

    let element: UnsafeMutablePointer<GstElement>

    /// `dropWhenFull`: with 4 samples waiting, drop the oldest (an encoder's consumers must never hold it up);
    /// false makes upstream wait instead (a probe must not lose frames it would then report as the stream's).
    public init(takingOwnership element: UnsafeMutablePointer<GstElement>, dropWhenFull: Bool = true,
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
                    .onSample(buffer, gst_sample_get_caps(sample), gst_sample_get_segment(sample))
            }
            return GST_FLOW_OK
        }
        let box = Unmanaged.passRetained(Box(onSample: onSample, onEOS: onEOS)).toOpaque()
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

    /// Asks for a key frame at the first frame whose running time is `runningTime` or later.
    public func requestKeyFrame(at runningTime: GstClockTime) {
        gst_element_send_event(element, gst_video_event_new_upstream_force_key_unit(runningTime, 1, 0))
    }
}
