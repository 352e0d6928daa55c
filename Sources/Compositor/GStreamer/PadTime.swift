import CGst

/// Times of buffers as they cross a pad.
enum PadTime {
    /// `buffer`'s running time by the time segment on `pad`; nil when the buffer has no PTS, the pad no time
    /// segment yet, or the PTS lies outside the segment.
    static func runningTime(of buffer: UnsafeMutablePointer<GstBuffer>, on pad: UnsafeMutablePointer<GstPad>) -> MediaTime? {
        let pts = cgst_buffer_pts(buffer)
        guard pts != cgst_clock_time_none(),
              let event = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0) else { return nil }
        defer { gst_event_unref(event) }
        var segment: UnsafePointer<GstSegment>?
        gst_event_parse_segment(event, &segment)
        guard let segment, segment.pointee.format == GST_FORMAT_TIME else { return nil }
        let running = gst_segment_to_running_time(segment, GST_FORMAT_TIME, pts)
        return running == cgst_clock_time_none() ? nil : MediaTime(running)
    }
}
