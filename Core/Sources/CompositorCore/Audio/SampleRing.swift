/// A fixed ring of interleaved 16-bit sample frames between a decoder that runs ahead and the frame loop that
/// takes what each frame needs. It never grows: a full ring makes the writer wait (see `MusicPlayer`). Not
/// thread-safe on its own; its owner locks around it.
public struct SampleRing {
    public let channels: Int
    public let capacity: Int
    private var storage: [Int16]
    private var head = 0
    public private(set) var count = 0

    public init(frames capacity: Int, channels: Int) {
        self.capacity = capacity
        self.channels = channels
        storage = Array(repeating: 0, count: capacity * channels)
    }

    public var free: Int { capacity - count }

    /// Appends up to `free` frames of `samples` (interleaved); returns the frames taken.
    public mutating func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        let frames = min(samples.count / channels, free)
        var done = 0
        while done < frames {
            let tail = (head + count) % capacity
            let n = min(frames - done, capacity - tail)
            storage.withUnsafeMutableBufferPointer { s in
                (s.baseAddress! + tail * channels).update(from: samples.baseAddress! + done * channels, count: n * channels)
            }
            count += n
            done += n
        }
        return frames
    }

    /// Moves up to `out.count / channels` frames into `out`; returns the frames moved.
    public mutating func read(into out: UnsafeMutableBufferPointer<Int16>) -> Int {
        let frames = min(out.count / channels, count)
        var done = 0
        while done < frames {
            let n = min(frames - done, capacity - head)
            storage.withUnsafeBufferPointer { s in
                (out.baseAddress! + done * channels).update(from: s.baseAddress! + head * channels, count: n * channels)
            }
            head = (head + n) % capacity
            count -= n
            done += n
        }
        return frames
    }

    public mutating func removeAll() {
        head = 0
        count = 0
    }
}
