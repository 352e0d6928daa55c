/// Shifts an encoded stream's timestamps so an output's own stream starts at zero.
///
/// Frames carry the frame clock's running time since pipcompose started; a recording begun later, or a
/// new file after a split, must start at 0 or players show a long empty lead-in. The sound follows the
/// picture's start, so both tracks keep the timeline they were drawn on.
struct Restamper {
    /// The frame-clock time of this output's first frame, once it went out.
    private(set) var start: MediaTime?

    mutating func reset() { start = nil }

    /// A new buffer (memory shared) with shifted PTS and DTS; the first one sets the start.
    mutating func restamp(_ buffer: MediaBuffer) -> MediaBuffer {
        guard let pts = buffer.pts else { return buffer.shallowCopy() }
        if start == nil { start = pts }
        let shifted = pts >= start! ? pts - start! : 0
        return buffer.restamped(pts: shifted, dts: shifted)
    }

    /// Another track's buffer (sound) on the picture's timeline: nil until the first frame set the start, and
    /// for a buffer from before it.
    func follow(_ buffer: MediaBuffer) -> MediaBuffer? {
        guard let start, let pts = buffer.pts, pts >= start else { return nil }
        return buffer.restamped(pts: pts - start, dts: pts - start)
    }
}
