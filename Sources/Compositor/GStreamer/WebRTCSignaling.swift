import CGst
import Foundation

/// The offer/answer steps of one webrtcbin, for whichever side holds it: a server's viewer (`WebRTCPeer`, answering)
/// or a client (`WHEPClient`, offering). It does not own the element: its owner keeps it alive for as long as this
/// is used. Each action's promise is waited for on the caller's thread (never a bus or streaming thread), with a
/// timeout, so a webrtcbin that never answers cannot hold its caller.
struct WebRTCSignaling {
    /// Who is speaking, for error messages (the viewer's bin, `whep`).
    let name: String
    let webrtc: UnsafeMutablePointer<GstElement>

    /// A sender's RTCP sender reports map RTP time to the time each picture and sound was captured (drawn), not to
    /// when its packet left: webrtcbin's rtpbin uses the send time by default, and its sink does not wait for the
    /// clock, so the sound (its encoder's frames leave later than the pictures' after their capture) read 52 ms late
    /// against the picture at a receiver that lines the tracks up by those reports (a browser, `probe whep+… --av`),
    /// 0.3 ms with capture times.
    func reportCaptureTimes() {
        guard let rtpbin = gst_bin_get_by_name(cgst_bin(webrtc), "rtpbin") else { return }
        gst_util_set_object_arg(cgst_gobject(rtpbin), "rtcp-sync-send-time", "false")
        gst_object_unref(UnsafeMutableRawPointer(rtpbin))
    }

    /// STUN and TURN (webrtcbin takes one of each; a TURN login of its own, labelled `label`), the only local
    /// addresses ICE gathers on (empty: every interface), and no UPnP: libnice's (on by default) makes every
    /// gathering wait out its timeout and multicast SSDP searches.
    func configureICE(_ ice: IceSettings, addresses: [String], label: String) {
        if let stun = ice.servers.first(where: { !$0.isTURN }) {
            gst_util_set_object_arg(cgst_gobject(webrtc), "stun-server", stun.gstURI())
        }
        if let turn = ice.servers.first(where: \.isTURN), let login = ice.turnLogin(label: label) {
            gst_util_set_object_arg(cgst_gobject(webrtc), "turn-server", turn.gstURI(user: login.user, password: login.password))
        }
        guard let agent = cgst_object_get_pointer(UnsafeMutableRawPointer(webrtc), "ice-agent") else { return }
        for a in addresses { _ = cgst_webrtc_ice_add_local_ip(agent, a) }
        if let nice = cgst_object_get_pointer(agent, "agent") {
            gst_util_set_object_arg(cgst_gobject(nice), "upnp", "false")
            g_object_unref(nice)
        }
        g_object_unref(agent)
    }

    /// Sets the other side's description (`offer` or `answer`) from its SDP text.
    func setRemote(_ type: GstWebRTCSDPType, sdp text: String) throws(GstError) {
        var sdp: UnsafeMutablePointer<GstSDPMessage>?
        guard gst_sdp_message_new_from_text(text, &sdp) == GST_SDP_OK, let sdp else {
            throw GstError(element: name, message: "the \(type == GST_WEBRTC_SDP_TYPE_OFFER ? "offer" : "answer") is not SDP GStreamer can read")
        }
        guard let description = gst_webrtc_session_description_new(type, sdp) else {
            throw GstError(element: name, message: "cannot use the remote description")
        }
        defer { gst_webrtc_session_description_free(description) }
        try wait("set-remote-description") {
            cgst_webrtc_set_description(webrtc, "set-remote-description", description, $0)
        }?.release()
    }

    /// Creates this side's offer or answer, sets it, waits until ICE gathering is complete (non-trickle: the
    /// candidates are in the text; `gatherTimeout` nil: no wait, for a side that trickles what comes later, and the
    /// text as made, with no candidate), and returns the local description's SDP.
    func describeLocally(offering: Bool, gatherTimeout: TimeInterval?) throws(GstError) -> String {
        let what = offering ? "create-offer" : "create-answer"
        guard let reply = try wait(what, {
            offering ? cgst_webrtc_create_offer(webrtc, $0) : cgst_webrtc_create_answer(webrtc, $0)
        }) else { throw GstError(element: name, message: "webrtcbin made no \(offering ? "offer" : "answer")") }
        guard let value = gst_structure_get_value(reply.structure, offering ? "offer" : "answer"),
              let made = g_value_get_boxed(value).map({ $0.assumingMemoryBound(to: GstWebRTCSessionDescription.self) })
        else {
            reply.release()
            throw GstError(element: name, message: "webrtcbin made no \(offering ? "offer" : "answer")")
        }
        let ours = gst_webrtc_session_description_copy(made)!
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
        // Trickling: the description as made, with no candidate. The local description may already hold those
        // gathered since it was set (on a host, within a millisecond), and a candidate in the offer is not trickled.
        guard let gatherTimeout else { return try text(of: ours) }
        if !gatheringComplete, gathered.wait(timeout: .now() + gatherTimeout) == .timedOut {
            throw GstError(element: name, message: "ICE gathering did not complete within \(Int(gatherTimeout)) s (no usable local address?)")
        }
        guard let local = cgst_object_get_pointer(UnsafeMutableRawPointer(webrtc), "local-description")?
            .assumingMemoryBound(to: GstWebRTCSessionDescription.self) else {
            throw GstError(element: name, message: "no local description after gathering")
        }
        defer { gst_webrtc_session_description_free(local) }
        return try text(of: local)
    }

    /// A session description's SDP text.
    private func text(of description: UnsafeMutablePointer<GstWebRTCSessionDescription>) throws(GstError) -> String {
        guard let textPointer = gst_sdp_message_as_text(description.pointee.sdp) else {
            throw GstError(element: name, message: "cannot write the local description")
        }
        defer { g_free(textPointer) }
        return String(cString: textPointer)
    }

    /// Whether ICE gathering has completed.
    var gatheringComplete: Bool {
        cgst_object_get_enum(UnsafeMutableRawPointer(webrtc), "ice-gathering-state")
            == Int32(GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE.rawValue)
    }

    /// A candidate the other side found after its description (trickle ICE): `candidate:…` of its media section at
    /// `mline`.
    func addRemote(candidate line: String, mline: Int) {
        cgst_webrtc_add_ice_candidate(webrtc, guint(max(0, mline)), line)
    }

    /// The peer connection's state as webrtcbin names it: new, connecting, connected, disconnected, failed, closed.
    var connectionState: String {
        let v = cgst_object_get_enum(UnsafeMutableRawPointer(webrtc), "connection-state")
        return ["new", "connecting", "connected", "disconnected", "failed", "closed"][Int(max(0, min(5, v)))]
    }

    /// ICE's own state: new, checking, connected, completed, failed, disconnected, closed.
    var iceConnectionState: String {
        let v = cgst_object_get_enum(UnsafeMutableRawPointer(webrtc), "ice-connection-state")
        return ["new", "checking", "connected", "completed", "failed", "disconnected", "closed"][Int(max(0, min(6, v)))]
    }

    /// A promise's reply, owned until `release()`.
    struct Reply {
        let promise: UnsafeMutablePointer<GstPromise>
        var structure: UnsafePointer<GstStructure>
        func release() { gst_promise_unref(promise) }
    }

    /// Emits an action with a new promise and waits for it, at most `timeout` seconds (then the promise is
    /// interrupted); a reply with an `error` field is thrown.
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
