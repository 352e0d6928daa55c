import CGst
import Foundation

/// One WebRTC viewer inside a running fan-out pipeline: a bin (`pipelines/webrtc-viewer.pipeline`: a leaky queue,
/// the RTP payloader, webrtcbin) hung on the pipeline's tee, answering one SDP offer. The bin is owned here from
/// `init` to `remove()`; the webrtcbin's promises are waited for on the caller's thread (never the bus thread).
///
/// `@unchecked Sendable`: the GStreamer objects are touched by the owner's queue only; the callbacks come from
/// GStreamer's threads and only call the closures given.
final class WebRTCPeer: @unchecked Sendable {
    /// The bin's name: the viewer's errors on the shared bus carry it in their path.
    let name: String
    private let pipeline: UnsafeMutablePointer<GstElement>
    private let bin: UnsafeMutablePointer<GstElement>
    private let webrtc: UnsafeMutablePointer<GstElement>
    /// Each tee this viewer hangs on, and the pad it was given there.
    private var feeds: [(tee: UnsafeMutablePointer<GstElement>, pad: UnsafeMutablePointer<GstPad>?)] = []
    private var removed = false
    /// The bin's ghost pads not yet linked to their tees, and the pipeline holding the tees.
    private var unfed: [(pad: UnsafeMutablePointer<GstPad>, tee: String)] = []
    private weak var owner: Pipeline?

    /// - Parameters:
    ///   - launch: the viewer's bin as gst-launch text, with `webrtcbin name=peer`.
    ///   - feeds: which element of the bin takes which tee of the owner pipeline (`video` ← `fan`, `sound` ←
    ///     `audiofan`); each gets a ghost pad on the bin.
    ///   - addresses: the only local addresses ICE gathers on (loopback and the address the page was served on);
    ///     empty: every interface.
    init(in owner: Pipeline, name: String, launch: String, feeds links: [(element: String, tee: String)],
         addresses: [String], ice: IceSettings = IceSettings()) throws(GstError) {
        self.name = name
        var error: UnsafeMutablePointer<GError>?
        guard let bin = gst_parse_bin_from_description(launch, 0, &error).flatMap({ cgst_element(UnsafeMutableRawPointer($0)) })
        else { throw GstError.take(error, element: name, fallback: "cannot build the viewer's bin") }
        gst_object_set_name(cgst_object(UnsafeMutableRawPointer(bin)), name)
        guard let webrtc = gst_bin_get_by_name(cgst_bin(bin), "peer") else {
            // The new bin's reference is floating: take it, then drop it.
            gst_object_ref_sink(UnsafeMutableRawPointer(bin))
            gst_object_unref(UnsafeMutableRawPointer(bin))
            throw GstError(element: name, message: "the viewer's pipeline needs 'webrtcbin name=peer'")
        }
        self.bin = bin
        self.webrtc = webrtc
        pipeline = owner.element
        gst_object_ref(UnsafeMutableRawPointer(pipeline))
        // A ghost sink pad on the bin for each fed element, named after it.
        var ghosts: [(pad: UnsafeMutablePointer<GstPad>, tee: String)] = []
        for link in links {
            guard let inner = gst_bin_get_by_name(cgst_bin(bin), link.element) else { continue }
            defer { gst_object_unref(UnsafeMutableRawPointer(inner)) }
            guard let target = gst_element_get_static_pad(inner, "sink") else { continue }
            defer { gst_object_unref(UnsafeMutableRawPointer(target)) }
            if let ghost = gst_ghost_pad_new("sink_\(link.element)", target) {
                gst_element_add_pad(bin, ghost)
                ghosts.append((ghost, link.tee))
            }
        }
        // STUN and TURN: webrtcbin takes one of each; a TURN login of its own for this viewer.
        if let stun = ice.servers.first(where: { !$0.isTURN }) {
            gst_util_set_object_arg(cgst_gobject(webrtc), "stun-server", stun.gstURI())
        }
        if let turn = ice.servers.first(where: \.isTURN), let login = ice.turnLogin(label: "pipcompose-\(name)") {
            gst_util_set_object_arg(cgst_gobject(webrtc), "turn-server", turn.gstURI(user: login.user, password: login.password))
        }
        if let ice = cgst_object_get_pointer(UnsafeMutableRawPointer(webrtc), "ice-agent") {
            for a in addresses { _ = cgst_webrtc_ice_add_local_ip(ice, a) }
            // No UPnP: a server does not ask routers to open ports, and libnice's UPnP (on by default) makes every
            // gathering wait out its timeout and multicast SSDP searches for each viewer.
            if let agent = cgst_object_get_pointer(ice, "agent") {
                gst_util_set_object_arg(cgst_gobject(agent), "upnp", "false")
                g_object_unref(agent)
            }
            g_object_unref(ice)
        }
        // Into the running pipeline, playing; fed from the tees once the offer is answered (`answer`).
        gst_bin_add(cgst_bin(pipeline), bin)
        _ = gst_element_sync_state_with_parent(bin)
        unfed = ghosts
        self.owner = owner
    }

    /// Hangs the viewer on the tees. Only after answering: webrtcbin 1.22 matches an offer against the caps that
    /// have reached its pads, and the payloader's (profile-level-id 42c01f, from x264's SPS) do not match a
    /// browser's 42e01f; a viewer fed before its offer was set would be answered "receive only" and get nothing.
    private func feed() throws(GstError) {
        defer { unfed = [] }
        for (ghost, teeName) in unfed {
            guard let tee = owner?.element(named: teeName) else {
                throw GstError(element: name, message: "the fan-out pipeline has no element '\(teeName)'")
            }
            let pad = gst_element_request_pad_simple(tee, "src_%u")
            feeds.append((tee, pad))
            guard let pad, gst_pad_link(pad, ghost) == GST_PAD_LINK_OK else {
                throw GstError(element: name, message: "cannot link the viewer to the stream (\(teeName))")
            }
        }
    }

    deinit {
        assert(removed, "WebRTCPeer \(name) released without remove()")
    }

    /// Sets the remote offer, creates and sets the answer, waits for ICE gathering to complete (non-trickle: the
    /// candidates are in the answer), hangs the viewer on the stream, and returns the answer's text.
    func answer(offer text: String, gatherTimeout: TimeInterval) throws(GstError) -> String {
        var sdp: UnsafeMutablePointer<GstSDPMessage>?
        guard gst_sdp_message_new_from_text(text, &sdp) == GST_SDP_OK, let sdp else {
            throw GstError(element: name, message: "the offer is not SDP GStreamer can read")
        }
        guard let offer = gst_webrtc_session_description_new(GST_WEBRTC_SDP_TYPE_OFFER, sdp) else {
            throw GstError(element: name, message: "cannot use the offer")
        }
        defer { gst_webrtc_session_description_free(offer) }
        try wait("set-remote-description") { cgst_webrtc_set_description(webrtc, "set-remote-description", offer, $0) }?.release()
        guard let reply = try wait("create-answer", { cgst_webrtc_create_answer(webrtc, $0) }) else {
            throw GstError(element: name, message: "webrtcbin made no answer for this offer")
        }
        guard let value = gst_structure_get_value(reply.structure, "answer"),
              let answer = g_value_get_boxed(value).map({ $0.assumingMemoryBound(to: GstWebRTCSessionDescription.self) })
        else {
            reply.release()
            throw GstError(element: name, message: "webrtcbin made no answer for this offer")
        }
        let ours = gst_webrtc_session_description_copy(answer)!
        defer { gst_webrtc_session_description_free(ours) }
        reply.release()
        // Gathering starts with the local description; wait for it to complete (a few hundred ms on a host).
        let gathered = DispatchSemaphore(value: 0)
        let handler = Signals.connect(UnsafeMutableRawPointer(webrtc), "notify::ice-gathering-state") { [webrtc] _, _ in
            if cgst_object_get_enum(UnsafeMutableRawPointer(webrtc), "ice-gathering-state")
                == Int32(GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE.rawValue) { gathered.signal() }
        }
        defer { g_signal_handler_disconnect(UnsafeMutableRawPointer(webrtc), handler) }
        try wait("set-local-description") { cgst_webrtc_set_description(webrtc, "set-local-description", ours, $0) }?.release()
        if cgst_object_get_enum(UnsafeMutableRawPointer(webrtc), "ice-gathering-state")
            != Int32(GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE.rawValue),
           gathered.wait(timeout: .now() + gatherTimeout) == .timedOut {
            throw GstError(element: name, message: "ICE gathering did not complete within \(Int(gatherTimeout)) s (no usable local address?)")
        }
        guard let local = cgst_object_get_pointer(UnsafeMutableRawPointer(webrtc), "local-description")?
            .assumingMemoryBound(to: GstWebRTCSessionDescription.self) else {
            throw GstError(element: name, message: "no local description after gathering")
        }
        defer { gst_webrtc_session_description_free(local) }
        guard let textPointer = gst_sdp_message_as_text(local.pointee.sdp) else {
            throw GstError(element: name, message: "cannot write the answer")
        }
        defer { g_free(textPointer) }
        try feed()
        return String(cString: textPointer)
    }

    /// The connection state as webrtcbin names it: new, connecting, connected, disconnected, failed, closed.
    var connectionState: String {
        let v = cgst_object_get_enum(UnsafeMutableRawPointer(webrtc), "connection-state")
        return ["new", "connecting", "connected", "disconnected", "failed", "closed"][Int(max(0, min(5, v)))]
    }

    /// Calls `handler` (on a GStreamer thread) with each new connection state.
    func onConnectionState(_ handler: @escaping (String) -> Void) {
        Signals.connect(UnsafeMutableRawPointer(webrtc), "notify::connection-state") { [weak self] _, _ in
            if let self { handler(self.connectionState) }
        }
    }

    /// Calls `handler` when the viewer's RTCP has been silent long enough for the RTP session to time it out (a tab
    /// closed without saying so: about 30 s); webrtcbin's ICE alone never notices.
    func onReceiverTimeout(_ handler: @escaping () -> Void) {
        guard let rtpbin = gst_bin_get_by_name(cgst_bin(webrtc), "rtpbin") else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(rtpbin)) }
        Signals.connect(UnsafeMutableRawPointer(rtpbin), "on-timeout", twoIntegers: handler)
    }

    /// The appsrc named `name` inside the viewer's bin (its own input), bounded and leaky.
    func appSource(named name: String, maxBuffers: Int) -> AppSource? {
        gst_bin_get_by_name(cgst_bin(bin), name).map { AppSource(takingOwnership: $0, maxBuffers: maxBuffers) }
    }

    /// Calls `handler` for every key-frame request (PLI/FIR) the viewer sends through a bin fed from a tee: they
    /// end at the fan-out's appsrc, and the encoder lives in another pipeline.
    func onKeyFrameRequest(_ handler: @escaping () -> Void) {
        guard let sink = gst_element_get_static_pad(bin, "sink_video") else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(sink)) }
        Pipeline.probeUpstreamKeyUnit(on: sink, handler)
    }

    /// Unhooks the viewer from each tee when no buffer is passing there, then stops and drops its bin. Idempotent.
    func remove() {
        guard !removed else { return }
        removed = true
        for (tee, pad) in feeds {
            guard let pad else {
                gst_object_unref(UnsafeMutableRawPointer(tee))
                continue
            }
            let done = DispatchSemaphore(value: 0)
            let unhook: (UnsafeMutablePointer<GstPad>) -> Void = { pad in
                if let peer = gst_pad_get_peer(pad) {
                    gst_pad_unlink(pad, peer)
                    gst_object_unref(UnsafeMutableRawPointer(peer))
                }
                gst_element_release_request_pad(tee, pad)
            }
            let probe = Pipeline.whenIdle(pad) { pad in
                unhook(pad)
                done.signal()
            }
            // Not idle within 2 s (a push stuck downstream): take the probe back and unhook it from here.
            if done.wait(timeout: .now() + 2) == .timedOut {
                gst_pad_remove_probe(pad, probe)
                if gst_pad_is_linked(pad) != 0 { unhook(pad) }
            }
            gst_object_unref(UnsafeMutableRawPointer(pad))
            gst_object_unref(UnsafeMutableRawPointer(tee))
        }
        feeds = []
        gst_element_set_state(bin, GST_STATE_NULL)
        gst_bin_remove(cgst_bin(pipeline), bin)
        gst_object_unref(UnsafeMutableRawPointer(webrtc))
        gst_object_unref(UnsafeMutableRawPointer(pipeline))
    }

    /// A promise's reply, owned until `release()`.
    private struct Reply {
        let promise: UnsafeMutablePointer<GstPromise>
        var structure: UnsafePointer<GstStructure>
        func release() { gst_promise_unref(promise) }
    }

    /// Emits an action with a new promise and waits for it, at most `timeout` seconds (then the promise is
    /// interrupted: a webrtcbin that never answers cannot hold the signaling queue); a reply with an `error` field
    /// is thrown.
    private func wait(_ what: String, timeout: TimeInterval = 10,
                      _ emit: (UnsafeMutablePointer<GstPromise>) -> Void) throws(GstError) -> Reply? {
        let changed = Unmanaged.passRetained(PromiseSignal()).toOpaque()
        let onChange: @convention(c) (UnsafeMutablePointer<GstPromise>?, gpointer?) -> Void = { _, data in
            if let data { Unmanaged<PromiseSignal>.fromOpaque(data).takeUnretainedValue().done.signal() }
        }
        let release: @convention(c) (gpointer?) -> Void = { data in
            if let data { Unmanaged<PromiseSignal>.fromOpaque(data).release() }
        }
        let promise = gst_promise_new_with_change_func(onChange, changed, release)!
        emit(promise)
        if Unmanaged<PromiseSignal>.fromOpaque(changed).takeUnretainedValue().done.wait(timeout: .now() + timeout) == .timedOut {
            gst_promise_interrupt(promise)
        }
        let result = gst_promise_wait(promise)
        guard result == GST_PROMISE_RESULT_REPLIED else {
            gst_promise_unref(promise)
            throw GstError(element: name, message: "\(what) was not answered")
        }
        guard let reply = gst_promise_get_reply(promise) else {
            gst_promise_unref(promise)
            return nil
        }
        if let value = gst_structure_get_value(reply, "error"), let e = g_value_get_boxed(value) {
            let message = String(cString: e.assumingMemoryBound(to: GError.self).pointee.message)
            gst_promise_unref(promise)
            throw GstError(element: name, message: "\(what): \(message)")
        }
        return Reply(promise: promise, structure: reply)
    }
}

/// What a promise's change function signals (it may run on any thread, or after the waiter gave up).
private final class PromiseSignal {
    let done = DispatchSemaphore(value: 0)
}
