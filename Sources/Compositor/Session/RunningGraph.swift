import Foundation

/// The running objects of one `Topology`: the encoders, the outputs they feed, and the servers fed from them.
/// Immutable: every change makes a new graph, which `LiveSession` publishes whole, so the frame loop reads one
/// consistent graph per frame.
final class RunningGraph: Sendable {
    let topology: Topology
    let live: Encoder
    let fixed: [PixelSize: Encoder]
    /// The outputs the topology places (recordings, pushes, pipelines, HLS rungs), by id.
    let outputs: [String: any PlacedOutput]
    /// What serves viewers and writes for players, for the whole run: never moved by a topology change.
    let servers: ServerSet
    /// One encoder per rendition (`--rendition`), for the whole run.
    let renditions: [PixelSize: Encoder]
    /// Every encoder of the main picture, the live one first: what the frame loop feeds the main picture to.
    let encoders: [Encoder]
    /// The encoders of the renditions some output carries now: the renditions the frame loop draws.
    let watched: [PixelSize: Encoder]

    init(topology: Topology, live: Encoder, fixed: [PixelSize: Encoder] = [:], renditions: [PixelSize: Encoder] = [:],
         outputs: [String: any PlacedOutput], servers: ServerSet) {
        self.topology = topology
        self.servers = servers
        self.live = live
        self.fixed = fixed
        self.renditions = renditions
        self.outputs = outputs
        encoders = [live] + fixed.keys.sorted { ($0.width, $0.height) < ($1.width, $1.height) }.compactMap { fixed[$0] }
        watched = renditions.filter { topology.watchedRenditions.contains($0.key) }
    }

    /// Every encoder, the renditions' too: what is drained at the end.
    var allEncoders: [Encoder] {
        encoders + renditions.keys.sorted { ($0.width, $0.height) < ($1.width, $1.height) }.compactMap { renditions[$0] }
    }

    func replacing(topology: Topology, fixed: [PixelSize: Encoder]? = nil,
                   outputs: [String: any PlacedOutput]? = nil) -> RunningGraph {
        RunningGraph(topology: topology, live: live, fixed: fixed ?? self.fixed, renditions: renditions,
                     outputs: outputs ?? self.outputs, servers: servers)
    }

    /// Every output of the run, as one set: the placed ones, then the servers and writers.
    var everyOutput: [any Output] {
        outputs.keys.sorted().compactMap { outputs[$0] } + servers.outputs
    }

    /// The encoder behind `feed`, if it exists.
    func encoder(for feed: Topology.Feed) -> Encoder? {
        switch feed {
        case .live: live
        case .fixed(let s): fixed[s]
        case .rendition(let s): renditions[s]
        }
    }

    /// Outputs that still run or will again (a push retrying); failed and finished ones leave the topology.
    var alive: Set<String> {
        Set(outputs.filter { $0.value.isAlive }.keys)
    }
}

/// The newest value of something one owner replaces and other threads read: the lock is held only to copy a
/// reference, never while work is done.
///
/// `@unchecked Sendable`: `value` is only read and written under `lock`.
final class Latest<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
