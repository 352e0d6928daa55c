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
/// sweep can match a picture at the wrong k: an exact twin at one picture size is not one at another, where the
/// pictures then stop matching (the everything hour's 1024x576 spans, after a lock taken at 1280x720). Two things
/// keep a sweep honest. It also goes *ahead* of "played throughout" (the lag was overestimated: a twin found
/// further back), nearest first, down to no lag at all. And a match that changes the lag is taken at once only when
/// it is about as good as the pictures matched so far (`typicalQuality`, within `qualityMargin`): a near twin
/// (PSNR 28 dB where the stream reads 55) is held as provisional while the search goes on, and the best one held
/// is taken only when nothing better came in `patience` pictures and the sweep ahead has gone round (a stream
/// damaged throughout).
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
    /// The quality (PSNR, dB) of the pictures that matched, as a moving average; nil before the first.
    public private(set) var typicalQuality: Double?
    /// How far below `typicalQuality` a match that changes the lag may be and still be taken at once.
    public let qualityMargin: Double
    /// Pictures after the first poorer match held before the best held is taken anyway (once the sweep ahead has
    /// gone round).
    public let patience: Int
    /// The best poorer match found since the last one taken, and how many pictures came since the first was held.
    private var provisional: (frame: UInt64, scene: UInt64, quality: Double, pictures: Int)?
    /// Whether the sweep ahead went round (or had nothing to sweep) since the last match taken.
    private var aheadSwept = false

    public init(maxSpan: Int = 60, qualityMargin: Double = 6, patience: Int = 30) {
        self.maxSpan = max(2, maxSpan)
        self.qualityMargin = qualityMargin
        self.patience = max(1, patience)
    }

    /// Frames the scene stands behind the strip now.
    public var behind: UInt64 { last.map { $0.frame - $0.scene } ?? 0 }

    /// The scene frames picture `frame` may show, likeliest first. Never empty.
    public mutating func candidates(for frame: UInt64) -> [UInt64] {
        if var held = provisional, frame > held.frame {
            held.pictures += 1
            provisional = held
            if held.pictures >= patience && aheadSwept { matched(frame: held.frame, scene: held.scene, quality: held.quality) }
        }
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
        // Beyond played throughout, nearest first, down to no lag (scene frame = frame): a third as many.
        var aheadTo = sweep.ahead
        if lag > 0 {
            let aheadFrom = sweep.ahead > lag ? 1 : sweep.ahead
            aheadTo = min(lag + 1, aheadFrom + max(1, UInt64(maxSpan / 3)))
            for j in aheadFrom..<aheadTo { out.append(last.scene + gap + j) }
        }
        if lag == 0 || aheadTo > lag { aheadSwept = true }
        sweep = (upTo, downTo, aheadTo)
        return out
    }

    /// Picture `frame` matched scene frame `scene`, `quality` (PSNR) its likeness when known.
    public mutating func matched(frame: UInt64, scene: UInt64, quality: Double? = nil) {
        guard scene <= frame else { return }
        if let last, frame < last.frame { return }
        last = (frame, scene)
        sweep = (1, 1, 1)
        provisional = nil
        aheadSwept = false
        if let quality { typicalQuality = typicalQuality.map { $0 + (quality - $0) / 8 } ?? quality }
    }

    /// Whether a match of this quality that changes the lag is taken at once: about as good as the matches so far.
    public func isTypical(_ quality: Double) -> Bool {
        typicalQuality.map { quality >= $0 - qualityMargin } ?? true
    }

    /// The likest of the poorer matches for picture `frame` (none of its candidates matched as well as is typical):
    /// held, and taken by a later `candidates` as the type's notes say. Returns whether it was taken now.
    @discardableResult
    public mutating func found(frame: UInt64, scene: UInt64, quality: Double) -> Bool {
        guard scene <= frame else { return false }
        guard isTypical(quality) else {
            // The pictures since the first one held are counted by `candidates`.
            if provisional.map({ quality > $0.quality }) ?? true {
                provisional = (frame, scene, quality, provisional?.pictures ?? 0)
            }
            return false
        }
        matched(frame: frame, scene: scene, quality: quality)
        return true
    }
}
