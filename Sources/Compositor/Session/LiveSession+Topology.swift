import Foundation

/// Changes to what runs. Each is computed by `Topology` as a value and carried out here, on `owner`, the one
/// queue that replaces the running graph. Nothing slow happens on that queue: the encoders a resize needs are made
/// when it is asked for (`prepareResize`), a split recording's next part starts off it (`startSplitPart`), draining
/// an encoder or finalizing a file runs elsewhere and reports back as an event.
extension LiveSession {
    /// A resize was asked for: the fixed-size encoders it will need (a `fit` recording letterboxed into the size it
    /// started with) are made now, off the frame loop and the owner's queue, so the frame that applies it only
    /// switches to them. One not ready by then is made at that frame, as before.
    func prepareResize(to size: PixelSize) {
        guard let graph = running.value else { return }
        let (alive, _) = graph.topology.keeping(graph.alive)
        let needed = alive.resized(to: size).1.compactMap { step -> PixelSize? in
            if case .startEncoder(let s) = step { return s }
            return nil
        }
        guard !needed.isEmpty else { return }
        let rawCaps = FrameProducer.caps(size: size, fps: options.fps)
        for fixed in needed where resizes.reserve(fixed: fixed, liveSize: size) {
            DispatchQueue.global().async { [weak self] in
                guard let self else { return }
                do {
                    let e = try self.makeEncoder(fixed: fixed, liveSize: size, rawCaps: rawCaps)
                    if !self.resizes.put(e, fixed: fixed, liveSize: size) { e.finish(timeout: 2) }
                } catch {
                    self.resizes.cancel(fixed: fixed, liveSize: size)
                    self.log("cannot letterbox into \(fixed): \(error)")
                }
            }
        }
    }

    /// Ends the encoders made for resizes that did not come (the run ends).
    func discardReadyEncoders() {
        for e in resizes.discardAll() { e.finish(timeout: 2) }
    }

    /// On the loop thread, before the first frame of `size`, stamped `time`: fixed-size files switch to an
    /// encoder of their own size (fit) or end and start a new numbered file (split), at that frame exactly.
    func willResize(to size: PixelSize, rawCaps: String, at time: MediaTime) {
        owner.sync {
            guard let graph = running.value else { return }
            // The live encoder starts over at the new size: its frame at `time` is a key frame.
            graph.live.requestKeyFrame(at: time)
            let (alive, _) = graph.topology.keeping(graph.alive)
            let (next, steps) = alive.resized(to: size)
            running.value = carryOut(steps, from: graph, to: next, at: time, rawCaps: rawCaps)
        }
        // Encoders made ahead for sizes asked for and not applied are ended, off this thread.
        let stale = resizes.discard(besides: size)
        if !stale.isEmpty { DispatchQueue.global().async { for e in stale { e.finish(timeout: 2) } } }
        log("resized to \(size)")
        events.publish(.resized(size))
    }

    /// Turns `graph` into the running graph of `topology` by `steps`. A step that fails (an encoder that cannot
    /// be made, a split file that cannot be opened) ends the outputs it concerns; the rest carry on.
    private func carryOut(_ steps: [Topology.Step], from graph: RunningGraph, to topology: Topology,
                          at time: MediaTime, rawCaps: String) -> RunningGraph {
        var topology = topology
        var fixed = graph.fixed
        var outputs = graph.outputs
        for step in steps {
            switch step {
            case .startEncoder(let s):
                do {
                    let e = try resizes.take(fixed: s, liveSize: topology.size)
                        ?? makeEncoder(fixed: s, liveSize: topology.size, rawCaps: rawCaps)
                    // Once stopped and drained, outputs waiting for its last frame move on at once.
                    e.onDrained = { [weak self, weak e] in
                        guard let self, let e else { return }
                        for out in self.tally.ran { out.sourceEnded(e) }
                    }
                    fixed[s] = e
                } catch {
                    log("cannot letterbox into \(s): \(error)")
                }
            case .switchFeed(let id, let feed):
                guard let out = outputs[id] else { continue }
                guard let target = feed == .live ? graph.live : feed.size.flatMap({ fixed[$0] }) else {
                    log("\(id): no encoder for \(feed); the file ends here")
                    out.end(at: time)
                    outputs[id] = nil
                    continue
                }
                target.requestKeyFrame(at: time)
                out.switchSource(to: target, at: time)
            case .end(let id):
                outputs.removeValue(forKey: id)?.end(at: time)
            case .start(let o):
                do {
                    // Fed from this frame on now; its pipeline starts off this queue and takes the frames held
                    // meanwhile (opening a file is no work for the frame that applies a resize).
                    let fresh = try makePipelineOutput(o.spec, index: 0, location: o.location)
                    _ = try fresh.prepare()
                    fresh.feed(from: graph.live, startingAt: time)
                    outputs[o.id] = fresh
                    tally.started([fresh])
                    let size = topology.size
                    DispatchQueue.global().async { [weak self] in self?.startSplitPart(fresh, size: size) }
                } catch {
                    log("\(o.id): cannot start: \(error)")
                }
            case .retireEncoder(let s):
                if let e = fixed.removeValue(forKey: s) { retire(e) }
            }
        }
        // Outputs a failed step ended leave the topology, and encoders only they used are retired.
        let (kept, retiring) = topology.keeping(Set(outputs.keys))
        topology = kept
        for case .retireEncoder(let s) in retiring { if let e = fixed.removeValue(forKey: s) { retire(e) } }
        return graph.replacing(topology: topology, fixed: fixed, outputs: outputs.filter { topology.output($0.key) != nil })
    }

    /// Starts the next part of a split recording, fed since the frame of the resize. One that cannot start leaves the
    /// topology and says why; the rest carry on.
    private func startSplitPart(_ part: any PlacedOutput, size: PixelSize) {
        do {
            try part.open()
            log("\(part.id): size is now \(size); continuing in \(part.location ?? part.id)")
        } catch {
            log("\(part.id): cannot start: \(error)")
            owner.sync {
                guard let graph = running.value, graph.outputs[part.id] === part,
                      let (next, steps) = try? graph.topology.removing(part.id) else { return }
                var fixed = graph.fixed
                for case .retireEncoder(let s) in steps { if let e = fixed.removeValue(forKey: s) { retire(e) } }
                running.value = graph.replacing(topology: next, fixed: fixed,
                                                outputs: graph.outputs.filter { $0.key != part.id })
            }
            _ = part.finish(timeout: 1)
        }
    }

    /// Drains and stops an encoder nobody listens to, off the owner's queue; outputs waiting for its last
    /// frames then move on.
    private func retire(_ e: Encoder) {
        DispatchQueue.global().async { [weak self] in
            e.finish(timeout: 2)
            guard let self else { return }
            self.tally.retired(e)
            for out in self.tally.ran { out.sourceEnded(e) }
        }
    }

    /// Starts a recording or a push while running (`ctl record start FILE`), with willStart/didStart or
    /// failedToStart events. Returns the output's id.
    @discardableResult
    public func startOutput(_ spec: OutputSpec, rendition asked: PixelSize? = nil) throws(ControlError) -> String {
        if case .rtsp = spec { throw .bad("the RTSP server is configured at start (--rtsp)") }
        let out: PipelineOutput
        do {
            let main = running.value?.topology.size ?? options.size
            let named: String = switch spec {
            case .record(let path, _, _): path
            case .push(let url, _): url
            case .custom(let path): path
            case .hls(let folder, _): folder
            case .rtsp: "rtsp"
            }
            let rendition = try Rendition.resolve(asked, output: named, in: options.renditions, main: main)
            out = try makePipelineOutput(spec, index: tally.startedCount, location: nil, rendition: rendition)
            _ = try out.prepare()
        } catch {
            throw .unprocessable("\(error)")
        }
        // Into the topology first (a resize from now on knows of it), then the pipeline starts, off the queue.
        try owner.sync { Result { () throws(ControlError) in
            guard let graph = running.value else { throw ControlError.conflict("not running") }
            let (alive, _) = graph.topology.keeping(graph.alive)
            let next = try ControlError.from(alive.adding(Topology.Output(id: out.id, spec: spec, location: out.location,
                                                                         rendition: out.rendition)))
            out.feed(from: out.rendition.flatMap { graph.renditions[$0] } ?? graph.live)
            var outputs = graph.outputs.filter { alive.output($0.key) != nil }
            outputs[out.id] = out
            running.value = graph.replacing(topology: next, outputs: outputs)
            tally.started([out])
        } }.get()
        events.publish(.willStart(output: out.id))
        do {
            try out.open()
        } catch {
            owner.sync {
                guard let graph = running.value, let (next, _) = try? graph.topology.removing(out.id) else { return }
                running.value = graph.replacing(topology: next, outputs: graph.outputs.filter { $0.key != out.id })
            }
            out.finish(timeout: 1)
            events.publish(.failedToStart(output: out.id, reason: "\(error)"))
            throw .unprocessable("cannot start \(out.id): \(error)")
        }
        events.publish(.didStart(output: out.id))
        return out.id
    }

    /// Ends one output while the rest run on. It leaves the topology now; its file is finalized in the
    /// background (up to 10 s for the muxer to finish), which `didStop` reports with `finalized`.
    public func stopOutput(id: String) throws(ControlError) {
        let (out, retiring) = try owner.sync { Result { () throws(ControlError) -> (any PlacedOutput, [Encoder]) in
            guard let graph = running.value else { throw ControlError.conflict("not running") }
            let (alive, _) = graph.topology.keeping(graph.alive)
            let (next, steps) = try ControlError.from(alive.removing(id))
            guard let out = graph.outputs[id] else { throw ControlError.notFound("no running output '\(id)'") }
            var fixed = graph.fixed
            var retiring: [Encoder] = []
            for case .retireEncoder(let s) in steps { if let e = fixed.removeValue(forKey: s) { retiring.append(e) } }
            running.value = graph.replacing(topology: next, fixed: fixed,
                                            outputs: graph.outputs.filter { next.output($0.key) != nil })
            return (out, retiring)
        } }.get()
        events.publish(.willStop(output: id))
        let events = self.events
        DispatchQueue.global().async {
            // finalized only when its end came out: not for one that failed (it said why in outputFailed), ran out of
            // time or was left behind stuck.
            let ended = out.finish(timeout: 10)
            events.publish(.didStop(output: id, finalized: ended == .finalized))
        }
        for e in retiring { retire(e) }
    }
}

extension Topology.Feed {
    /// The size of a fixed encoder; nil for the live one.
    var size: PixelSize? {
        if case .fixed(let s) = self { return s }
        return nil
    }
}

extension ControlError {
    /// A topology's refusal as the API says it: 409 for an output already running, 404 for one that is not.
    static func from<T>(_ change: @autoclosure () throws(Topology.Refusal) -> T) throws(ControlError) -> T {
        do { return try change() } catch {
            switch error {
            case .alreadyRunning(let m): throw .conflict(m)
            case .noSuchOutput(let m): throw .notFound(m)
            }
        }
    }
}
