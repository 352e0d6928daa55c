/// What every consumer of the encoded stream must do before pushing a frame into its own appsrc: start on a
/// key frame (frames before one are of no use to a decoder) and pass caps on when they change.
struct StreamGate {
    private var waitingForKey = true
    private var lastCaps: MediaCaps?

    /// False for frames to drop while waiting for the first key frame.
    mutating func admit(_ buffer: MediaBuffer) -> Bool {
        if waitingForKey {
            if !buffer.isKeyFrame { return false }
            waitingForKey = false
        }
        return true
    }

    /// Sets new caps on `input` when they differ from the last ones; with `keepFirst`, only the first caps.
    mutating func pass(_ caps: MediaCaps?, to input: AppSource, keepFirst: Bool = false) {
        guard let caps else { return }
        if keepFirst && lastCaps != nil { return }
        if let last = lastCaps, last == caps { return }
        lastCaps = caps
        input.setCaps(caps)
    }

    /// Waits for the next key frame again (another encoder took over).
    mutating func resync() { waitingForKey = true }

    /// Forgets everything (a new appsrc).
    mutating func reset() {
        lastCaps = nil
        waitingForKey = true
    }
}
