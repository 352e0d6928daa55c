import CGst

/// Shifts an encoded stream's timestamps so an output's own stream starts at zero.
///
/// Frames carry the frame clock's running time since pipcompose started; a recording begun later, or a
/// new file after a split, must start at 0 or players show a long empty lead-in.
struct Restamper {
    private var offset: GstClockTime?

    mutating func reset() { offset = nil }

    /// A new buffer (shallow copy, memory shared) with shifted PTS/DTS; the caller owns it.
    mutating func restamp(_ buffer: UnsafeMutablePointer<GstBuffer>) -> UnsafeMutablePointer<GstBuffer> {
        let copy = gst_buffer_copy(buffer)!
        let pts = cgst_buffer_pts(buffer)
        if offset == nil, pts != cgst_clock_time_none() { offset = pts }
        if let offset, pts != cgst_clock_time_none() {
            let shifted = pts >= offset ? pts - offset : 0
            cgst_buffer_set_pts_dts(copy, shifted, shifted)
        }
        return copy
    }
}
