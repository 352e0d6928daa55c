/// Which scene frame a decoded picture shows, for comparing it with the scene drawn again (`--reference`).
///
/// The strip carries the frame number `n`; the source's scene time is n ÷ fps only while it has never been paused.
/// A pause (`ctl pause`) holds scene time while frames go on, on the frame grid (`Playback`), so from then on a
/// picture shows scene frame n − k for a whole k that grows by one for every paused frame. The tracker follows k
/// from the pictures themselves: between the last picture that matched (frame m, scene frame s) and frame n > m,
/// scene time moved forward by anything from 0 (paused throughout) to n − m (played throughout). It proposes those
/// scene frames, likeliest first, and the comparer keeps the first that matches.
///
/// A live comparer skips frames while it is busy, so a pause can begin or end between two compared pictures:
/// the moments between are proposed too (the latest `maxBetween` of them). After a picture that matched none, the
/// next ones sweep the span since the last match, `maxSweep` at a time, from both ends: from the last match's scene
/// frame up (a pause out of sight still holds scene time there) and from "played throughout" down (the pause ended
/// out of sight: the pictures stand a constant count of frames behind). Either sweep catches up with its case, however
/// far apart the compared pictures are.
///
/// A probe that joins a run paused before it came starts at k = 0 and cannot know better: its pictures read as
/// corrupt where they animate (docs/MEASURE.md). Skips (`ctl skip`) jump scene time and are not followed.
public struct SceneFrameTracker: Sendable {
    /// The last picture that matched: its frame number and the scene frame it showed.
    public private(set) var last: (frame: UInt64, scene: UInt64)?
    /// Scene frames proposed between "played throughout" and "paused throughout", at most this many.
    public let maxBetween: Int
    /// After a miss, scene frames of the span proposed for one picture, at most this many.
    public let maxSweep: Int
    /// After a miss, the sweeps' next steps: scene frames past `last.scene`, and frames short of played throughout;
    /// nil while matching.
    private var sweep: (up: UInt64, down: UInt64)?

    public init(maxBetween: Int = 4, maxSweep: Int = 60) {
        self.maxBetween = max(0, maxBetween)
        self.maxSweep = max(1, maxSweep)
    }

    /// Frames the scene stands behind the strip now.
    public var behind: UInt64 { last.map { $0.frame - $0.scene } ?? 0 }

    /// The scene frames picture `frame` may show, likeliest first: played on since the last match, paused since
    /// it, then the moments between (latest first; after a miss, the sweep's next part). Never empty.
    public mutating func candidates(for frame: UInt64) -> [UInt64] {
        let lag = behind
        guard let last, frame > last.frame else { return [frame >= lag ? frame - lag : 0] }
        let gap = frame - last.frame
        var out: [UInt64] = [last.scene + gap, last.scene]
        guard gap > 1 else { return out }
        if let (up, down) = sweep {
            // Steps 1..<gap lie strictly between the two ends; each sweep goes round when it reaches the far end.
            let half = UInt64(max(1, maxSweep / 2))
            let upFrom = up >= gap ? 1 : up, downFrom = down >= gap ? 1 : down
            let upTo = min(gap, upFrom + half), downTo = min(gap, downFrom + half)
            for j in upFrom..<upTo { out.append(last.scene + j) }
            for d in downFrom..<downTo where !out.contains(last.scene + gap - d) { out.append(last.scene + gap - d) }
            sweep = (upTo, downTo)
        } else {
            var j = gap - 1
            while j > 0 && out.count < 2 + maxBetween {
                out.append(last.scene + j)
                j -= 1
            }
        }
        return out
    }

    /// Picture `frame` matched scene frame `scene`.
    public mutating func matched(frame: UInt64, scene: UInt64) {
        guard scene <= frame else { return }
        if let last, frame < last.frame { return }
        last = (frame, scene)
        sweep = nil
    }

    /// The picture last proposed for matched none of its candidates: the next ones sweep the span.
    public mutating func missed() {
        if sweep == nil { sweep = (1, 1) }
    }
}
