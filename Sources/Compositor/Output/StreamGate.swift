import CGst

/// What every consumer of the encoded stream must do before pushing a frame into its own appsrc: start on a
/// key frame (frames before one are of no use to a decoder) and pass caps on when they change.
struct StreamGate {
    private var waitingForKey = true
    private var lastCaps: UnsafeMutablePointer<GstCaps>?

    /// False for frames to drop while waiting for the first key frame.
    mutating func admit(_ buffer: UnsafeMutablePointer<GstBuffer>) -> Bool {
        if waitingForKey {
            if cgst_buffer_is_delta(buffer) != 0 { return false }
            waitingForKey = false
        }
        return true
    }

    /// Sets new caps on `input` when they differ from the last ones; with `keepFirst`, only the first caps.
    mutating func pass(_ caps: UnsafeMutablePointer<GstCaps>?, to input: AppSource, keepFirst: Bool = false) {
        guard let caps else { return }
        if keepFirst && lastCaps != nil { return }
        if let last = lastCaps, gst_caps_is_equal(last, caps) != 0 { return }
        if let last = lastCaps { gst_caps_unref(last) }
        lastCaps = gst_caps_ref(caps)
        input.setCaps(caps)
    }

    /// Waits for the next key frame again (another encoder took over).
    mutating func resync() { waitingForKey = true }

    /// Forgets everything (a new appsrc).
    mutating func reset() {
        if let last = lastCaps { gst_caps_unref(last) }
        lastCaps = nil
        waitingForKey = true
    }
}
