/// Which scene frame a decoded picture shows, for comparing it with the scene drawn again (`--reference`).
///
/// The strip carries the frame number `n`; the source's scene time is n ÷ fps only while it has never been paused.
/// A pause (`ctl pause`) holds scene time while frames go on, on the frame grid (`Playback`), so from then on a
/// picture shows scene frame n − k for a whole k that grows by one for every paused frame. The tracker follows k
/// from the pictures themselves: between the last picture that matched (frame m, scene frame s) and frame n > m,
/// scene time moved forward by anything from 0 (paused throughout) to n − m (played throughout). It proposes those
/// scene frames, likeliest first (played on, then paused, then the moments between, latest first), and the comparer
/// keeps the first that matches.
///
/// A live comparer skips frames while it is busy, and a soak compares one picture in 30, so a pause can begin or end
/// between two compared pictures: every moment between is proposed when there are at most `maxSpan` of them. Past
/// that (a comparer far behind), each picture proposes `maxSpan` of them from both ends of the span, moving on at the
/// next picture until one matches: from the last match's scene frame up (a pause still holds scene time there) and
/// from "played throughout" down (the pause ended out of sight: the pictures stand a constant count of frames
/// behind). Either sweep catches up with its case, however far apart the compared pictures are.
///
/// A scene that repeats (a ticker's loop) shows the same picture, or nearly, at scene frames a period apart, so a
/// sweep can match a picture at the wrong k: the info panel at 1280x720 is the same picture 925 frames on, which at
/// 1024x576 it is not (the everything hour's corrupt 1024x576 spans). When such a twin put the scene further behind
/// than it is, the truth lies beyond "played throughout": the sweeps also go there (`ahead`), nearest first, down to
/// no lag at all, so the tracker finds its way back. A near twin (at 1024x576 the picture 472 frames on matches at
/// worst-region SSIM 0.945, PSNR 28 dB) can still be taken for the truth by a sweep; the pictures then read as
/// matched but not exact until it stops matching.
///
/// A probe that joins a run paused before it came starts at k = 0 and cannot know better: its pictures read as
/// corrupt where they animate (docs/MEASURE.md). Skips (`ctl skip`) jump scene time and are not followed.
public struct SceneFrameTracker: Sendable {
    /// The last picture that matched: its frame number and the scene frame it showed.
    public private(set) var last: (frame: UInt64, scene: UInt64)?
    /// Moments between proposed for one picture, at most this many.
    public let maxSpan: Int
    /// Over a wider span, the sweeps' next steps: scene frames past `last.scene`, frames short of played
    /// throughout, and frames beyond it; reset by a match.
    private var sweep: (up: UInt64, down: UInt64, ahead: UInt64) = (1, 1, 1)

    public init(maxSpan: Int = 60) { self.maxSpan = max(2, maxSpan) }

    /// Frames the scene stands behind the strip now.
    public var behind: UInt64 { last.map { $0.frame - $0.scene } ?? 0 }

    /// The scene frames picture `frame` may show, likeliest first. Never empty.
    public mutating func candidates(for frame: UInt64) -> [UInt64] {
        let lag = behind
        guard let last, frame > last.frame else { return [frame >= lag ? frame - lag : 0] }
        let gap = frame - last.frame
        var out: [UInt64] = [last.scene + gap, last.scene]
        guard gap > 1 else { return out }
        if gap - 1 <= UInt64(maxSpan) {
            out += (1..<gap).reversed().map { last.scene + $0 }
            return out
        }
        // Steps 1..<gap lie strictly between the two ends; each sweep goes round when it reaches the far end.
        let half = UInt64(maxSpan / 2)
        let upFrom = sweep.up >= gap ? 1 : sweep.up, downFrom = sweep.down >= gap ? 1 : sweep.down
        let upTo = min(gap, upFrom + half), downTo = min(gap, downFrom + half)
        for d in downFrom..<downTo { out.append(last.scene + gap - d) }
        for j in upFrom..<upTo where !out.contains(last.scene + j) { out.append(last.scene + j) }
        // Beyond played throughout (the lag overestimated), nearest first, down to no lag: a third as many.
        var aheadTo = sweep.ahead
        if lag > 0 {
            let aheadFrom = sweep.ahead > lag ? 1 : sweep.ahead
            aheadTo = min(lag + 1, aheadFrom + max(1, UInt64(maxSpan / 3)))
            for j in aheadFrom..<aheadTo { out.append(last.scene + gap + j) }
        }
        sweep = (upTo, downTo, aheadTo)
        return out
    }

    /// Picture `frame` matched scene frame `scene`.
    public mutating func matched(frame: UInt64, scene: UInt64) {
        guard scene <= frame else { return }
        if let last, frame < last.frame { return }
        last = (frame, scene)
        sweep = (1, 1, 1)
    }
}
