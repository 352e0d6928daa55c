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
        WebRTCSignaling(name: name, webrtc: webrtc).configureICE(ice, addresses: addresses, label: "pipcompose-\(name)")
        WebRTCSignaling(name: name, webrtc: webrtc).reportCaptureTimes()
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
        let signaling = WebRTCSignaling(name: name, webrtc: webrtc)
        try signaling.setRemote(GST_WEBRTC_SDP_TYPE_OFFER, sdp: text)
        let answer = try signaling.describeLocally(offering: false, gatherTimeout: gatherTimeout)
        try feed()
        return answer
    }

    /// A candidate the viewer found after its offer (trickle ICE), of its media section at `mline`.
    func addRemote(candidate line: String, mline: Int) {
        WebRTCSignaling(name: name, webrtc: webrtc).addRemote(candidate: line, mline: mline)
    }

    /// The connection state as webrtcbin names it: new, connecting, connected, disconnected, failed, closed.
    var connectionState: String { WebRTCSignaling(name: name, webrtc: webrtc).connectionState }

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
}
