import CGst
import Foundation

/// Owns one GStreamer pipeline built from gst-launch text, and the thread that reads its bus.
///
/// Elements are found by name. `stop()` sends EOS, waits for it to come out (so muxers finalize their files),
/// then sets NULL; it must be called before the last reference goes.
///
/// `@unchecked Sendable`: GStreamer's element and bus calls are thread-safe; `stopped`, `lastError` and `handler` are behind `lock`, EOS behind `eosCondition`.
///
/// One concern in one file, longer than 420 lines on purpose: the one owner of a GstPipeline and every element
/// reached by name in it (appsrc, appsink, the bus thread), so each C pointer has its owner here and nowhere else.
public final class Pipeline: @unchecked Sendable {
    public enum Event: Sendable {
        case error(GstError)
        case warning(GstError)
        case eos
    }

    public let name: String
    public let description: String
    let element: UnsafeMutablePointer<GstElement>
    private let bus: UnsafeMutablePointer<GstBus>
    private var watcher: Thread?
    private let lock = NSLock()
    private var stopped = false
    private var sawEOS = false
    private var lastError: GstError?
    private let eosCondition = NSCondition()
    private var handler: (@Sendable (Event) -> Void)?

    /// Parses `text`; a syntax error or a missing element is thrown with GStreamer's words.
    public init(name: String, launch text: String) throws(GstError) {
        Gst.initialize()
        self.name = name
        description = text
        var error: UnsafeMutablePointer<GError>?
        let parsed = gst_parse_launch_full(text, nil, GST_PARSE_FLAG_FATAL_ERRORS, &error)
        if let error {
            if let parsed { gst_object_unref(UnsafeMutableRawPointer(parsed)) }
            throw GstError.take(error, element: name, fallback: "cannot parse the pipeline")
        }
        guard let parsed else { throw GstError(element: name, message: "cannot parse the pipeline") }
        // A single element comes back bare: wrap it so there is always a pipeline with a clock and a bus.
        if g_type_check_instance_is_a(UnsafeMutableRawPointer(parsed).assumingMemoryBound(to: GTypeInstance.self),
                                      gst_pipeline_get_type()) == 0 {
            gst_object_unref(UnsafeMutableRawPointer(parsed))
            throw GstError(element: name, message: "expected a pipeline of several elements")
        }
        element = parsed
        gst_object_set_name(cgst_object(UnsafeMutableRawPointer(parsed)), name)
        bus = gst_element_get_bus(parsed)
    }

    deinit {
        assert(stopped || watcher == nil, "Pipeline \(name) released without stop()")
        gst_element_set_state(element, GST_STATE_NULL)
        gst_object_unref(UnsafeMutableRawPointer(bus))
        gst_object_unref(UnsafeMutableRawPointer(element))
    }

    /// A named element of the pipeline (transfer full: the caller's reference).
    func element(named n: String) -> UnsafeMutablePointer<GstElement>? {
        gst_bin_get_by_name(cgst_bin(element), n)
    }

    /// The appsrc named `name`, set up live (time format, a queue of `maxBuffers`, leaky or not); nil when the
    /// pipeline has no element of that name.
    public func appSource(named name: String, maxBuffers: Int, leaky: Bool = true) -> AppSource? {
        element(named: name).map { AppSource(takingOwnership: $0, maxBuffers: maxBuffers, leaky: leaky) }
    }

    /// The appsink named `name`, calling `onSample` on its streaming thread; see `AppSink`.
    public func appSink(named name: String, dropWhenFull: Bool = true, runningTime: Bool = false,
                        onSample: @escaping AppSink.Handler, onEOS: @escaping () -> Void) -> AppSink? {
        element(named: name).map {
            AppSink(takingOwnership: $0, dropWhenFull: dropWhenFull, runningTime: runningTime, onSample: onSample, onEOS: onEOS)
        }
    }

    /// The factory an element was made from (`avenc_aac` for `name=encoder`), nil when there is no such element.
    public func factoryName(ofElementNamed name: String) -> String? {
        guard let e = element(named: name) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(e)) }
        guard let f = gst_element_get_factory(e) else { return nil }
        return cgst_object_name(cgst_object(UnsafeMutableRawPointer(f))).map { String(cString: $0) }
    }

    /// True when the pipeline has an element named `name`.
    public func hasElement(named name: String) -> Bool {
        guard let e = element(named: name) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(e))
        return true
    }

    /// Sets a property of the element named `name` from its string form, as gst-launch would (a capsfilter's
    /// caps at run time); false when there is no such element.
    @discardableResult
    public func set(_ property: String, _ value: String, onElementNamed name: String) -> Bool {
        guard let e = element(named: name) else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(e)) }
        gst_util_set_object_arg(cgst_gobject(UnsafeMutableRawPointer(e)), property, value)
        return true
    }

    /// Emits the action signal `signal` that takes one string on the element named `name` (wpesrc's
    /// `run-javascript`); false when there is no such element.
    @discardableResult
    public func emit(_ signal: String, _ text: String, onElementNamed name: String) -> Bool {
        guard let e = element(named: name) else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(e)) }
        cgst_emit_string(UnsafeMutableRawPointer(e), signal, text)
        return true
    }

    /// Sets a property, from its string form, of the RTP session manager (rtpbin) that the rtspsrc named `name`
    /// makes when it connects, or that the webrtcbin named `name` holds.
    public func setOnManager(ofElementNamed name: String, _ property: String, _ value: String) {
        guard let e = element(named: name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(e)) }
        // webrtcbin has its rtpbin from the start, named "rtpbin".
        if let rtpbin = Self.webrtcManager(of: e) {
            gst_util_set_object_arg(cgst_gobject(rtpbin), property, value)
            gst_object_unref(UnsafeMutableRawPointer(rtpbin))
            return
        }
        // rtspsrc has one; sdpdemux makes its rtpbin without telling.
        guard cgst_has_signal(UnsafeMutableRawPointer(e), "new-manager") != 0 else { return }
        Signals.connect(UnsafeMutableRawPointer(e), "new-manager") { _, manager in
            if let manager { gst_util_set_object_arg(cgst_gobject(manager), property, value) }
        }
    }

    /// Calls `handler` with the media ("audio", "video") and the step in nanoseconds each time the RTP session manager
    /// of the rtspsrc (or webrtcbin) named `name` moves one of its streams' timelines (a jitterbuffer's `ts-offset`): what it does
    /// when it lines the streams up by the RTCP sender reports. Called on the thread that moves it, before any
    /// buffer it moves leaves the jitterbuffer.
    public func onStreamShift(ofManagerOf name: String, _ handler: @escaping @Sendable (String, Int64) -> Void) {
        guard let e = element(named: name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(e)) }
        // webrtcbin has its rtpbin from the start, named "rtpbin"; rtspsrc makes one as it connects.
        if let rtpbin = Self.webrtcManager(of: e) {
            defer { gst_object_unref(UnsafeMutableRawPointer(rtpbin)) }
            Self.onStreamShift(ofManager: UnsafeMutableRawPointer(rtpbin), handler)
            return
        }
        guard cgst_has_signal(UnsafeMutableRawPointer(e), "new-manager") != 0 else { return }
        Signals.connect(UnsafeMutableRawPointer(e), "new-manager") { _, manager in
            if let manager { Self.onStreamShift(ofManager: manager, handler) }
        }
    }

    /// The rtpbin inside a webrtcbin (named "rtpbin" there from the start); nil for any other element.
    private static func webrtcManager(of e: UnsafeMutablePointer<GstElement>) -> UnsafeMutablePointer<GstElement>? {
        guard cgst_has_signal(UnsafeMutableRawPointer(e), "create-offer") != 0 else { return nil }
        return gst_bin_get_by_name(cgst_bin(e), "rtpbin")
    }

    private static func onStreamShift(ofManager manager: UnsafeMutableRawPointer, _ handler: @escaping @Sendable (String, Int64) -> Void) {
        guard cgst_has_signal(manager, "new-jitterbuffer") != 0 else { return }
        Signals.connect(manager, "new-jitterbuffer", objectAndTwoIntegers: { jitterbuffer in
            guard let jitterbuffer else { return }
            let previous = LastOffset(Int64(cgst_object_get_int64(jitterbuffer, "ts-offset")))
            Signals.connect(jitterbuffer, "notify::ts-offset") { object, _ in
                guard let object else { return }
                let step = previous.step(to: Int64(cgst_object_get_int64(object, "ts-offset")))
                guard step != 0, let media = Self.media(ofSourcePadOf: object) else { return }
                handler(media, step)
            }
        })
    }

    /// The `media` field of the caps on an element's src pad (RTP caps), if it has them yet.
    private static func media(ofSourcePadOf element: UnsafeMutableRawPointer) -> String? {
        guard let pad = gst_element_get_static_pad(cgst_element(element), "src") else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        guard let caps = gst_pad_get_current_caps(pad) else { return nil }
        defer { gst_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let media = gst_structure_get_string(gst_caps_get_structure(caps, 0), "media")
        else { return nil }
        return String(cString: media)
    }

    /// Sets `property` to `value` on the source a `uridecodebin` named `name` makes for its URI (`source-setup`), when
    /// that source comes from `factory`, before it starts: where a source's own properties are set (rtspsrc's
    /// latency).
    public func setOnSource(ofElementNamed name: String, factory: String, _ property: String, _ value: String) {
        guard let e = element(named: name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(e)) }
        Signals.connect(UnsafeMutableRawPointer(e), "source-setup") { _, source in
            guard let source, let f = gst_element_get_factory(cgst_element(source)),
                  let made = cgst_object_name(cgst_object(UnsafeMutableRawPointer(f))),
                  String(cString: made) == factory else { return }
            gst_util_set_object_arg(cgst_gobject(source), property, value)
        }
    }

    /// Links each pad the element named `name` adds to the sink pad of the element that `targets` names for the
    /// pad's `media` caps field (`["video": "picture"]`); a pad no target takes, or whose target is already linked,
    /// stays unlinked. Each pad is linked by the thread that adds it, to its own target. (gst-launch's delayed
    /// links, `src. ! …`, look through all of an element's pads from whichever thread adds one; rtspsrc adds its
    /// picture and sound pads from two threads at once, and one of them was sometimes left unlinked: the probe
    /// then read nothing, about one start in thirty.)
    /// `field`: the caps field whose value picks the target ("media"; "encoding-name" to link by codec).
    public func linkAddedPads(ofElementNamed name: String, byMedia targets: [String: String], field: String = "media") {
        guard let e = element(named: name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(e)) }
        Signals.connect(UnsafeMutableRawPointer(e), "pad-added") { [weak self] _, raw in
            guard let self, let pad = raw?.assumingMemoryBound(to: GstPad.self),
                  let caps = gst_pad_get_current_caps(pad) ?? gst_pad_query_caps(pad, nil) else { return }
            defer { gst_caps_unref(caps) }
            guard gst_caps_get_size(caps) > 0, let media = gst_structure_get_string(gst_caps_get_structure(caps, 0), field),
                  let target = targets[String(cString: media)], let t = self.element(named: target) else { return }
            defer { gst_object_unref(UnsafeMutableRawPointer(t)) }
            guard let sink = gst_element_get_static_pad(t, "sink") else { return }
            defer { gst_object_unref(UnsafeMutableRawPointer(sink)) }
            if gst_pad_is_linked(sink) == 0 { _ = gst_pad_link(pad, sink) }
        }
    }

    /// Calls `handler` (on the streaming thread) with the caps of every CAPS event reaching the sink pad of the element
    /// named `name`: what an input delivers before it is scaled (a source changing its size mid-stream).
    public func onCaps(ofElementNamed name: String, _ handler: @escaping (MediaCaps) -> Void) {
        guard let e = element(named: name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(e)) }
        guard let pad = gst_element_get_static_pad(e, "sink") else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        let box = Unmanaged.passRetained(CapsProbeBox(handler)).toOpaque()
        let probe: @convention(c) (UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?,
                                   gpointer?) -> GstPadProbeReturn = { _, info, data in
            guard let info, let data, let event = info.pointee.data?.assumingMemoryBound(to: GstEvent.self),
                  event.pointee.type == GST_EVENT_CAPS else { return GST_PAD_PROBE_OK }
            var caps: UnsafeMutablePointer<GstCaps>?
            gst_event_parse_caps(event, &caps)
            if let caps { Unmanaged<CapsProbeBox>.fromOpaque(data).takeUnretainedValue().handler(MediaCaps(retaining: caps)) }
            return GST_PAD_PROBE_OK
        }
        let destroy: @convention(c) (gpointer?) -> Void = { data in
            if let data { Unmanaged<CapsProbeBox>.fromOpaque(data).release() }
        }
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, probe, box, destroy)
    }

    /// Gives the element named `name`, when it takes tags (a muxer), `title` as a global tag: MP4 udta, Matroska
    /// segment tags, where players show it.
    public func setTitle(_ title: String, onElementNamed name: String) {
        guard let e = element(named: name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(e)) }
        guard cgst_is_tag_setter(e) != 0, let tags = cgst_tag_list_new_title(title) else { return }
        gst_tag_setter_merge_tags(cgst_tag_setter(e), tags, GST_TAG_MERGE_REPLACE)
        gst_tag_list_unref(tags)
    }

    /// Starts playing and the bus thread; `onEvent` runs on that thread.
    public func play(onEvent: @escaping @Sendable (Event) -> Void = { _ in }) throws(GstError) {
        handler = onEvent
        startWatcher()
        let r = gst_element_set_state(element, GST_STATE_PLAYING)
        if r == GST_STATE_CHANGE_FAILURE {
            throw waitForError() ?? GstError(element: name, message: "could not start playing")
        }
    }

    /// Opens the udpsrc named `source` (READY, no data flowing yet), then has the udpsink named `sink` send from the
    /// socket it receives on: a peer that answers RTCP to where it came from (a PLI from Janus) reaches
    /// `source`. Call `play` after it.
    public func shareSocket(from source: String, to sink: String) throws(GstError) {
        guard let from = element(named: source), let to = element(named: sink) else {
            throw GstError(element: name, message: "no elements named '\(source)' and '\(sink)' to share a socket")
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(from)); gst_object_unref(UnsafeMutableRawPointer(to)) }
        // The source alone: a udpsink opens its own socket as soon as it leaves NULL, and takes one given only before.
        if gst_element_set_state(from, GST_STATE_READY) == GST_STATE_CHANGE_FAILURE {
            throw waitForError() ?? GstError(element: source, message: "could not open its socket")
        }
        guard cgst_share_socket(UnsafeMutableRawPointer(from), UnsafeMutableRawPointer(to)) != 0 else {
            throw GstError(element: source, message: "opened no socket")
        }
    }

    /// Goes to PAUSED and waits up to `timeout` until the sinks hold their first data, as a seek needs; call
    /// `play` after it. A failure is thrown with GStreamer's words (a missing file, an undecodable one).
    public func preroll(timeout: TimeInterval) throws(GstError) {
        if gst_element_set_state(element, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE {
            throw waitForError() ?? GstError(element: name, message: "could not start")
        }
        switch gst_element_get_state(element, nil, nil, GstClockTime(timeout * 1e9)) {
        case GST_STATE_CHANGE_FAILURE: throw waitForError() ?? GstError(element: name, message: "could not start")
        case GST_STATE_CHANGE_ASYNC: throw GstError(element: name, message: "no data within \(Int(timeout)) s")
        default: break
        }
    }

    /// The stream's length once known (after a preroll), nil for a live or unknown one.
    public var durationSeconds: Double? {
        var d: gint64 = 0
        guard gst_element_query_duration(element, GST_FORMAT_TIME, &d) != 0, d > 0 else { return nil }
        return Double(d) / 1e9
    }

    /// A flushing, sample-accurate seek to `seconds` from the start; false when the stream cannot seek.
    public func seek(toSeconds seconds: Double) -> Bool {
        let flags = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | GST_SEEK_FLAG_ACCURATE.rawValue)
        return gst_element_seek_simple(element, GST_FORMAT_TIME, flags, gint64(seconds * 1e9)) != 0
    }

    /// After a failed state change the reason is on the bus; give the watcher a moment to have read it.
    private func waitForError() -> GstError? {
        if let msg = gst_bus_timed_pop_filtered(bus, 2 * cgst_second(), GST_MESSAGE_ERROR) {
            defer { gst_message_unref(msg) }
            return GstError.from(message: msg)
        }
        lock.lock()
        defer { lock.unlock() }
        return lastError
    }

    private func startWatcher() {
        let t = Thread { [weak self] in self?.watch() }
        t.name = "bus:\(name)"
        watcher = t
        t.start()
    }

    private func watch() {
        let wanted = GstMessageType(rawValue: GST_MESSAGE_ERROR.rawValue | GST_MESSAGE_EOS.rawValue
                                    | GST_MESSAGE_WARNING.rawValue | GST_MESSAGE_APPLICATION.rawValue)
        while true {
            lock.lock()
            let done = stopped
            lock.unlock()
            if done { return }
            // Sleeps until a message comes: no polling, so an idle pipeline costs nothing. `stop()` posts an
            // application message to wake it.
            guard let msg = gst_bus_timed_pop_filtered(bus, cgst_clock_time_none(), wanted) else { continue }
            let type = cgst_message_type(msg)
            if type == GST_MESSAGE_APPLICATION {
                gst_message_unref(msg)
                continue
            }
            let event: Event
            if type == GST_MESSAGE_EOS {
                event = .eos
                eosCondition.lock()
                sawEOS = true
                eosCondition.broadcast()
                eosCondition.unlock()
            } else if type == GST_MESSAGE_ERROR {
                let e = GstError.from(message: msg)
                lock.lock()
                lastError = e
                lock.unlock()
                eosCondition.lock()
                eosCondition.broadcast()
                eosCondition.unlock()
                event = .error(e)
            } else {
                event = .warning(GstError.from(message: msg, warning: true))
            }
            gst_message_unref(msg)
            handler?(event)
        }
    }

    /// How a wait for the end of stream ended.
    public enum StreamEnd: Sendable {
        /// EOS reached the sinks: a muxer has finalized its file.
        case eos
        /// The pipeline posted an error (before or during the wait): no EOS will come.
        case error(GstError)
        /// Neither came in time.
        case timedOut
    }

    /// Waits until EOS reached the sinks, or an error, or the timeout. An error ends the wait at once, so a
    /// caller can tell a pipeline that failed from one that is slow.
    public func waitForEnd(timeout: TimeInterval) -> StreamEnd {
        let deadline = Date().addingTimeInterval(timeout)
        eosCondition.lock()
        defer { eosCondition.unlock() }
        while true {
            if sawEOS { return .eos }
            if let e = lock.withLock({ lastError }) { return .error(e) }
            if !eosCondition.wait(until: deadline) {
                if sawEOS { return .eos }
                return lock.withLock { lastError }.map { .error($0) } ?? .timedOut
            }
        }
    }

    /// Waits until EOS reached the sinks, or an error, or the timeout. True when EOS was seen.
    public func waitForEOS(timeout: TimeInterval) -> Bool {
        if case .eos = waitForEnd(timeout: timeout) { return true }
        return false
    }

    /// Sends EOS through the pipeline from its sources.
    public func sendEOS() {
        gst_element_send_event(element, gst_event_new_eos())
    }

    /// Ends the pipeline: EOS (when `drain`), wait for it up to `timeout`, then NULL and the bus thread ends.
    /// Returns false when EOS did not arrive in time (the files may lack their last fragment).
    @discardableResult
    public func stop(drain: Bool = true, timeout: TimeInterval = 5) -> Bool {
        var ok = true
        if drain && watcher != nil {
            sendEOS()
            ok = waitForEOS(timeout: timeout)
        }
        lock.lock()
        stopped = true
        lock.unlock()
        // Wakes the bus thread, which then sees `stopped` and ends; posted before NULL, where the bus flushes
        // and drops what is posted to it.
        if let wake = gst_message_new_application(nil, gst_structure_new_empty("pipcompose-stop")) {
            _ = gst_bus_post(bus, wake)
        }
        gst_element_set_state(element, GST_STATE_NULL)
        return ok
    }
}

extension Pipeline {
    /// Stops without draining, giving up after `timeout`: false when the pipeline did not reach NULL by then (a sink
    /// blocked in a write that never returns: a FIFO nobody reads, a hung mount). Such a pipeline is left behind: the
    /// thread stopping it keeps it, and stays blocked, for the life of the process; nothing else touches it again
    /// (dropping it would set NULL once more, and block whoever dropped it).
    public func stop(within timeout: TimeInterval) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let stopper = Thread { [self] in
            stop(drain: false)
            done.signal()
        }
        stopper.name = "stop:" + name
        stopper.start()
        return done.wait(timeout: .now() + timeout) == .success
    }
}

/// The closure of a caps probe, kept alive until GStreamer drops the probe.
private final class CapsProbeBox {
    let handler: (MediaCaps) -> Void
    init(_ handler: @escaping (MediaCaps) -> Void) { self.handler = handler }
}

/// The closure of a pad probe that runs once (idle) or on each upstream key-unit request.
private final class PadProbeBox {
    let handler: (UnsafeMutablePointer<GstPad>) -> Void
    init(_ handler: @escaping (UnsafeMutablePointer<GstPad>) -> Void) { self.handler = handler }
}

extension Pipeline {
    /// Runs `handler` once no data is flowing through `pad` (at once if idle), on whichever thread finds it so:
    /// the safe moment to unlink a branch from a running tee.
    @discardableResult
    static func whenIdle(_ pad: UnsafeMutablePointer<GstPad>, _ handler: @escaping (UnsafeMutablePointer<GstPad>) -> Void) -> gulong {
        once(pad, GST_PAD_PROBE_TYPE_IDLE, handler)
    }

    /// Calls `handler` once, when the first buffer leaves the element named `name` (its "src" pad): by then the
    /// caps before it have reached the element downstream. False when there is no such element or pad.
    @discardableResult
    func onFirstBuffer(leaving name: String, _ handler: @escaping () -> Void) -> Bool {
        guard let e = element(named: name) else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(e)) }
        guard let pad = gst_element_get_static_pad(e, "src") else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        Self.once(pad, GST_PAD_PROBE_TYPE_BUFFER) { _ in handler() }
        return true
    }

    /// A probe of `type` on `pad` that runs `handler` the first time it fires and removes itself.
    private static func once(_ pad: UnsafeMutablePointer<GstPad>, _ type: GstPadProbeType,
                             _ handler: @escaping (UnsafeMutablePointer<GstPad>) -> Void) -> gulong {
        let box = Unmanaged.passRetained(PadProbeBox(handler)).toOpaque()
        let probe: @convention(c) (UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?,
                                   gpointer?) -> GstPadProbeReturn = { pad, _, data in
            if let pad, let data { Unmanaged<PadProbeBox>.fromOpaque(data).takeUnretainedValue().handler(pad) }
            return GST_PAD_PROBE_REMOVE
        }
        let destroy: @convention(c) (gpointer?) -> Void = { data in
            if let data { Unmanaged<PadProbeBox>.fromOpaque(data).release() }
        }
        return gst_pad_add_probe(pad, type, probe, box, destroy)
    }

    /// Calls `handler` for each upstream force-key-unit event reaching `pad` (a receiver's PLI or FIR), and lets it
    /// go on.
    static func probeUpstreamKeyUnit(on pad: UnsafeMutablePointer<GstPad>, _ handler: @escaping () -> Void) {
        let box = Unmanaged.passRetained(PadProbeBox({ _ in handler() })).toOpaque()
        let probe: @convention(c) (UnsafeMutablePointer<GstPad>?, UnsafeMutablePointer<GstPadProbeInfo>?,
                                   gpointer?) -> GstPadProbeReturn = { pad, info, data in
            guard let pad, let info, let data, let event = cgst_probe_info_event(info),
                  gst_video_event_is_force_key_unit(event) != 0 else { return GST_PAD_PROBE_OK }
            Unmanaged<PadProbeBox>.fromOpaque(data).takeUnretainedValue().handler(pad)
            return GST_PAD_PROBE_OK
        }
        let destroy: @convention(c) (gpointer?) -> Void = { data in
            if let data { Unmanaged<PadProbeBox>.fromOpaque(data).release() }
        }
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, probe, box, destroy)
    }
}

/// A jitterbuffer's last `ts-offset`, set from rtpbin's RTCP thread.
private final class LastOffset: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64
    init(_ value: Int64) { self.value = value }
    func step(to now: Int64) -> Int64 {
        lock.withLock {
            defer { value = now }
            return now - value
        }
    }
}
