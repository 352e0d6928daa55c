/// Shifts an encoded stream's timestamps so an output's own stream starts at zero.
///
/// Frames carry the frame clock's running time since pipcompose started; a recording begun later, or a
/// new file after a split, must start at 0 or players show a long empty lead-in.
struct Restamper {
    private var offset: MediaTime?

    mutating func reset() { offset = nil }

    /// A new buffer (memory shared) with shifted PTS and DTS.
    mutating func restamp(_ buffer: MediaBuffer) -> MediaBuffer {
        guard let pts = buffer.pts else { return buffer.shallowCopy() }
        if offset == nil { offset = pts }
        let shifted = pts >= offset! ? pts - offset! : 0
        return buffer.restamped(pts: shifted, dts: shifted)
    }
}
