import Foundation

/// Music as the audio track: the files of a playlist decoded one after another (looping at the end) into a ring
/// of two seconds, from which the frame loop takes exactly the samples each frame needs. The sound therefore
/// stays on the frame clock like the ticks do; the decoder only runs ahead by the ring, so memory is flat.
///
/// Pause holds the music where it is (silence goes out, nothing is consumed); skipping restarts the decoder at
/// the asked place. Each time a file starts being heard, `onTrack` says so (the now-playing card follows it).
/// A file that fails while playing is skipped with a warning; when none plays, the track goes silent, and says so.
///
/// `@unchecked Sendable`: the ring and play state are behind `condition`; the decoder is owned by `queue`.
public final class MusicPlayer: AudioSignal, @unchecked Sendable {
    public struct NowPlaying: Sendable, Equatable {
        public let index: Int
        public let file: AudioFile
        /// Seconds into the file heard at this moment.
        public let position: Double
        public let paused: Bool
    }

    public let files: [AudioFile]
    private let template: PipelineTemplate
    private let warn: @Sendable (String) -> Void
    private let onTrack: @Sendable (NowPlaying) -> Void

    private let condition = NSCondition()
    private var ring = SampleRing(frames: AudioTrack.rate * 2, channels: AudioTrack.channels)
    /// Frames written to and read from the ring since the start; `starts` says where in that stream files begin.
    private var framesIn: Int64 = 0
    private var framesOut: Int64 = 0
    private var starts: [(frame: Int64, index: Int, offset: Double)] = []
    private var current: (index: Int, offset: Double, frame: Int64)?
    /// Whether the file heard now has delivered sound yet (silence before its first samples is not a gap).
    private var flowing = false
    private var generation = 0
    private var paused = false
    private var stopped = false
    /// Every file failed in a row: the track is silent for good.
    private var gaveUp = false
    private var _gapFrames: Int64 = 0

    /// A render's player: `fill` waits for the decoder instead of sending silence (a render runs faster than the
    /// music plays), up to `waitLimit` seconds for a chunk.
    private let waits: Bool
    private let waitLimit: Double

    private let queue = DispatchQueue(label: "music")
    private var decoder: MusicDecoder?
    private var failuresInARow = 0

    public init(files: [AudioFile], template: PipelineTemplate, warn: @escaping @Sendable (String) -> Void,
                waitsForDecoder: Bool = false, waitLimit: Double = 10,
                onTrack: @escaping @Sendable (NowPlaying) -> Void) {
        precondition(!files.isEmpty, "a playlist holds at least one file")
        waits = waitsForDecoder
        self.waitLimit = waitLimit
        self.files = files
        self.template = template
        self.warn = warn
        self.onTrack = onTrack
    }

    /// Starts decoding the first file and waits (up to `timeout`) for its first samples, so the first frame
    /// already has sound.
    public func start(timeout: TimeInterval = 5) {
        queue.sync { open(index: 0, offset: 0) }
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        while framesIn == 0 && !stopped && !gaveUp && condition.wait(until: deadline) {}
        condition.unlock()
    }

    // MARK: the frame loop's side

    /// Fills `out` with the next samples (the position is the track's own: music is read in order).
    public func fill(_ out: UnsafeMutableBufferPointer<Int16>, from start: Int64) {
        let channels = AudioTrack.channels
        let want = out.count / channels
        var filled = 0
        var changed: NowPlaying?
        condition.lock()
        if !paused && !stopped {
            while filled < want {
                if let s = starts.first, s.frame <= framesOut {
                    starts.removeFirst()
                    current = (s.index, s.offset, framesOut)
                    flowing = false
                    changed = nowPlayingLocked()
                }
                var limit = want - filled
                if let s = starts.first { limit = min(limit, Int(s.frame - framesOut)) }
                let got = ring.read(into: UnsafeMutableBufferPointer(rebasing: out[(filled * channels)..<((filled + limit) * channels)]))
                if got == 0 && waits && !stopped && !gaveUp {
                    // The decoder is behind (between files, or slower than the render): its next chunk is waited for.
                    condition.broadcast()
                    if condition.wait(until: Date().addingTimeInterval(waitLimit)) { continue }
                    warn("audio: the decoder gave nothing for \(Int(waitLimit)) s; silence from here")
                    gaveUp = true
                }
                guard got > 0 else { break }
                framesOut += Int64(got)
                filled += got
                flowing = true
            }
            if filled < want && flowing { _gapFrames += Int64(want - filled) }
            if filled > 0 { condition.broadcast() }
        }
        condition.unlock()
        if filled < want { UnsafeMutableBufferPointer(rebasing: out[(filled * channels)...]).update(repeating: 0) }
        if let changed { onTrack(changed) }
    }

    // MARK: the decoder's side

    /// Takes a decoded chunk into the ring, waiting while it is full; a chunk of an older decoder (before a skip)
    /// is dropped.
    private func accept(_ samples: UnsafeBufferPointer<Int16>, generation g: Int) {
        let channels = AudioTrack.channels
        let total = samples.count / channels
        var done = 0
        condition.lock()
        defer { condition.unlock() }
        while done < total {
            guard g == generation, !stopped else { return }
            if ring.free == 0 {
                condition.wait()
                continue
            }
            let n = ring.write(UnsafeBufferPointer(rebasing: samples[(done * channels)...]))
            done += n
            framesIn += Int64(n)
            condition.broadcast()
        }
    }

    /// On `queue`: the decoder of `index` starts at `offset` seconds into it, heard from where the ring ends.
    private func open(index: Int, offset: Double) {
        decoder?.stop()
        decoder = nil
        let g: Int = condition.withLock {
            starts.append((framesIn, index, offset))
            return generation
        }
        let file = files[index]
        do {
            decoder = try MusicDecoder(file: file, template: template, from: offset, onSamples: { [weak self] s in
                self?.accept(s, generation: g)
            }, onEnd: { [weak self] error in
                guard let self else { return }
                queue.async { [weak self] in self?.ended(generation: g, index: index, error: error) }
            })
        } catch {
            queue.async { [weak self] in self?.ended(generation: g, index: index, error: error) }
        }
    }

    /// On `queue`: a file ended (or failed); the next one starts, the first after the last.
    private func ended(generation g: Int, index: Int, error: GstError?) {
        let (current, stopped) = condition.withLock { (generation, self.stopped) }
        guard g == current, !stopped else { return }
        if let error {
            failuresInARow += 1
            warn("audio: '\(files[index].name)' failed (\(error.message)); playing the next file")
        } else {
            failuresInARow = 0
        }
        guard failuresInARow < files.count else {
            decoder?.stop()
            decoder = nil
            condition.withLock {
                gaveUp = true
                condition.broadcast()
            }
            warn("audio: no file of the playlist plays; the sound is silent from here")
            return
        }
        open(index: (index + 1) % files.count, offset: 0)
    }

    // MARK: control

    private func nowPlayingLocked() -> NowPlaying? {
        guard let c = current else { return nil }
        return NowPlaying(index: c.index, file: files[c.index],
                          position: c.offset + Double(framesOut - c.frame) / Double(AudioTrack.rate), paused: paused)
    }

    /// What is heard now (nil before the first file started).
    public var nowPlaying: NowPlaying? { condition.withLock { nowPlayingLocked() } }

    /// Frames of silence played because the decoder was late, since the start.
    public var gapFrames: Int64 { condition.withLock { _gapFrames } }

    /// Holds or releases the music; false when it already was in that state.
    @discardableResult
    public func setPaused(_ value: Bool) -> Bool {
        condition.withLock {
            guard paused != value else { return false }
            paused = value
            return true
        }
    }

    /// Plays file `index` (taken round the playlist) from `offset` seconds: what is queued is dropped at once, and
    /// the decoder restarts there on the player's queue (the caller, a control request, does not wait on media;
    /// silence goes out until the new decoder's first samples). Returns the file's index.
    @discardableResult
    public func play(index: Int, from offset: Double = 0) -> Int {
        let i = ((index % files.count) + files.count) % files.count
        let g: Int = condition.withLock {
            generation += 1
            ring.removeAll()
            framesOut = framesIn
            starts = []
            condition.broadcast()
            return generation
        }
        queue.async { [weak self] in
            // A later skip wins over this one.
            guard let self, condition.withLock({ generation == g && !stopped }) else { return }
            failuresInARow = 0
            open(index: i, offset: max(0, offset))
        }
        return i
    }

    /// The next file of the playlist (the first after the last).
    @discardableResult
    public func next() -> Int { play(index: (nowPlaying?.index ?? 0) + 1) }

    /// The start of this file when more than three seconds of it were heard, else the file before.
    @discardableResult
    public func previous() -> Int {
        let now = nowPlaying
        return play(index: (now?.index ?? 0) - ((now?.position ?? 0) > 3 ? 0 : 1))
    }

    /// Moves by `seconds` within the file heard now; past its end is the next file. Returns where it went.
    @discardableResult
    public func seek(by seconds: Double) -> (index: Int, position: Double) {
        let now = nowPlaying
        let index = now?.index ?? 0
        let target = max(0, (now?.position ?? 0) + seconds)
        let duration = files[index].duration
        if duration > 0 && target >= duration { return (play(index: index + 1), 0) }
        play(index: index, from: target)
        return (index, target)
    }

    public func stop() {
        condition.withLock {
            stopped = true
            generation += 1
            condition.broadcast()
        }
        queue.sync {
            decoder?.stop()
            decoder = nil
        }
    }
}
