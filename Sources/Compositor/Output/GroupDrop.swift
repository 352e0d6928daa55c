/// What a consumer of the encoded stream does when its own bounded appsrc is full (its pipeline behind: a burst after
/// the frame loop caught up, a busy machine, a slow viewer): it loses that frame and the rest of its group of
/// pictures, up to the next key frame. appsrc's own leak would leave out the queue's oldest frame instead, a hole
/// inside a group already queued, and every later frame of that group would decode to garbage: the viewer's picture
/// would break rather than stop. Used by each RTSP media's feed and each WebRTC viewer's input.
struct GroupDrop {
    /// Frames left out: each that found the queue full, and the rest of its group.
    private(set) var skipped: UInt64 = 0
    /// A frame of the current group was left out: the others wait for the next key frame.
    private(set) var overflowing = false

    enum Verdict: Equatable {
        /// There is room: push it.
        case push
        /// Left out: an earlier frame of its group was.
        case rest
        /// Left out: the queue is full now. The first frame of a group lost: the moment to ask for a key frame.
        case full
    }

    /// Whether `buffer` goes into `input` now; a frame left out is counted in `skipped`.
    mutating func admit(_ buffer: MediaBuffer, into input: AppSource) -> Verdict {
        if overflowing {
            guard buffer.isKeyFrame else {
                skipped += 1
                return .rest
            }
            overflowing = false
        }
        guard input.queued < input.maxBuffers else {
            skipped += 1
            overflowing = true
            return .full
        }
        return .push
    }
}
