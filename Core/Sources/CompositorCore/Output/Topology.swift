import Foundation

/// What runs, as a value: the render size, which encoders exist (the live one, which follows the render size,
/// and one per file size for `fit` recordings), and every output with the encoder that feeds it.
///
/// It is never edited in place by the running session: each change (a resize, an output added or removed) is
/// a function from the old topology to the new one plus the steps that turn the running objects from one into
/// the other. The functions here know nothing of GStreamer; `LiveSession` carries out the steps, on its one
/// topology queue.
public struct Topology: Sendable, Equatable {
    /// A change that cannot be made, in words for the user.
    public enum Refusal: Error, Sendable, Equatable {
        case alreadyRunning(String)
        case noSuchOutput(String)

        public var message: String {
            switch self {
            case .alreadyRunning(let m), .noSuchOutput(let m): m
            }
        }
    }

    /// The encoder an output takes its frames from.
    public enum Feed: Hashable, Sendable, CustomStringConvertible {
        /// The live encoder: frames at the render size, whatever it is now.
        case live
        /// An encoder that letterboxes every frame into this size (for a `fit` file).
        case fixed(PixelSize)
        /// The encoder of a rendition: the scene drawn at this size with its own layout (`--rendition`).
        case rendition(PixelSize)

        public var description: String {
            switch self {
            case .live: "live"
            case .fixed(let s): "fixed \(s)"
            case .rendition(let s): "rendition \(s)"
            }
        }
    }

    /// One output: a recording, a push or a custom pipeline. (The RTSP server is not one: every media it
    /// creates shares the live encoder's frames, and a resize does not change that.)
    public struct Output: Sendable, Equatable {
        public var id: String
        public var spec: OutputSpec
        /// The file written now: for a split recording, the numbered file after the first resize.
        public var location: String?
        public var feed: Feed
        /// The picture size of a file that cannot change size (MP4, MKV); nil for the rest.
        public var fileSize: PixelSize?
        /// The rendition it carries (`small.mp4@416x234`); nil: the main picture.
        public var rendition: PixelSize?

        public init(id: String, spec: OutputSpec, location: String? = nil, feed: Feed = .live, fileSize: PixelSize? = nil,
                    rendition: PixelSize? = nil) {
            self.id = id
            self.spec = spec
            self.location = location
            self.feed = feed
            self.fileSize = fileSize
            self.rendition = rendition
        }
    }

    /// What the running objects must do to follow a change, in order.
    public enum Step: Sendable, Equatable {
        /// Create an encoder that letterboxes into this size.
        case startEncoder(PixelSize)
        /// The output takes its frames from `feed` from the frame of the change on (a key frame there).
        case switchFeed(output: String, to: Feed)
        /// The output's last frame is the one before the change; it finalizes and leaves.
        case end(output: String)
        /// A new output starts with the frame of the change (a split recording's next file).
        case start(Output)
        /// Nothing listens to this encoder any more: drain and stop it.
        case retireEncoder(PixelSize)
    }

    public var size: PixelSize
    public private(set) var outputs: [Output] = []
    public private(set) var fixedEncoders: Set<PixelSize> = []
    /// Files each split recording has written so far, by its first path.
    public private(set) var splits: [String: Int] = [:]

    public init(size: PixelSize) { self.size = size }

    public func output(_ id: String) -> Output? { outputs.first { $0.id == id } }

    /// The renditions some output carries: the only ones worth drawing and encoding.
    public var watchedRenditions: Set<PixelSize> { Set(outputs.compactMap(\.rendition)) }

    /// A topology with `output` added, fed by the live encoder (a fixed-size file takes the size of now), or by its
    /// rendition's encoder.
    public func adding(_ output: Output) throws(Refusal) -> Topology {
        guard self.output(output.id) == nil else { throw .alreadyRunning("\(output.id) is already running") }
        if let clash = outputs.first(where: { output.spec.sharesRTPPort(with: $0.spec) }) {
            throw .alreadyRunning("\(output.id) sends to a port \(clash.id) already sends to; its receiver would "
                                  + "mix the two streams: give it other ports")
        }
        var next = self
        var o = output
        o.feed = o.rendition.map { .rendition($0) } ?? .live
        if case .record(_, let format, _) = o.spec, format.fixedSize { o.fileSize = o.rendition ?? size }
        next.outputs.append(o)
        return next
    }

    /// A topology without the output `id`, and the encoders only it used retired.
    public func removing(_ id: String) throws(Refusal) -> (Topology, [Step]) {
        guard output(id) != nil else {
            let ids = outputs.map(\.id)
            throw .noSuchOutput("no running output '\(id)'; running: \(ids.isEmpty ? "none" : ids.joined(separator: ", "))")
        }
        var next = self
        next.outputs.removeAll { $0.id == id }
        return next.retiringUnused(after: [.end(output: id)])
    }

    /// Keeps only the outputs in `alive` (outputs that failed or finished on their own leave this way).
    public func keeping(_ alive: Set<String>) -> (Topology, [Step]) {
        var next = self
        next.outputs.removeAll { !alive.contains($0.id) }
        return next.retiringUnused(after: [])
    }

    /// The render size becomes `newSize`. Fixed-size files either keep their size, letterboxed by an encoder
    /// of that size (`fit`; back on the live encoder when the sizes match again), or end and continue in a new
    /// numbered file at the new size (`split`: `clip.mp4`, `clip-2.mp4`, `clip-3.mp4`, …).
    /// A numbered file that exists already (`taken`) is passed over: a split never writes over a file nobody named.
    public func resized(to newSize: PixelSize,
                        taken: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> (Topology, [Step]) {
        var next = self
        next.size = newSize
        var steps: [Step] = []
        var kept: [Output] = []
        var started: [Output] = []
        for var o in outputs {
            // A rendition keeps its size whatever the main picture does.
            guard o.rendition == nil, case .record(let path, let format, let policy) = o.spec, format.fixedSize,
                  let fileSize = o.fileSize else {
                kept.append(o)
                continue
            }
            switch policy {
            case .fit:
                let target: Feed = fileSize == newSize ? .live : .fixed(fileSize)
                if case .fixed(let s) = target, !next.fixedEncoders.contains(s) {
                    next.fixedEncoders.insert(s)
                    steps.append(.startEncoder(s))
                }
                if o.feed != target {
                    o.feed = target
                    steps.append(.switchFeed(output: o.id, to: target))
                }
                kept.append(o)
            case .split:
                steps.append(.end(output: o.id))
                let url = URL(fileURLWithPath: path)
                let numbered = { (n: Int) in url.deletingPathExtension().path + "-\(n)." + url.pathExtension }
                var n = next.splits[path, default: 1] + 1
                while taken(numbered(n)) { n += 1 }
                next.splits[path] = n
                let location = numbered(n)
                let fresh = Output(id: "record:\(location)", spec: o.spec, location: location, feed: .live,
                                   fileSize: newSize)
                steps.append(.start(fresh))
                started.append(fresh)
            }
        }
        next.outputs = kept + started
        return next.retiringUnused(after: steps)
    }

    /// `steps` followed by retiring every fixed encoder no output is fed by.
    private func retiringUnused(after steps: [Step]) -> (Topology, [Step]) {
        var next = self
        var steps = steps
        let used = Set(outputs.compactMap { o -> PixelSize? in
            if case .fixed(let s) = o.feed { return s }
            return nil
        })
        for s in fixedEncoders.subtracting(used).sorted(by: { ($0.width, $0.height) < ($1.width, $1.height) }) {
            next.fixedEncoders.remove(s)
            steps.append(.retireEncoder(s))
        }
        return (next, steps)
    }
}
