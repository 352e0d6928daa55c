import CGst
import Foundation

/// Owns the embedded gst-rtsp-server: the main mount whose media is shared by all viewers (one encoder for all),
/// one more mount per rendition served (`/pip@416x234`, each shared the same way), and the GLib main loop thread
/// it runs on.
///
/// The media pipeline starts with `appsrc name=in`; `onMediaReady` hands that appsrc over when a media is
/// built and `onMediaGone` takes it back when the media is unprepared (a stale appsrc after a reconnect is a
/// known crash). Every request shares one media (`SharedMediaFactory`), but while an old media is being torn
/// down a new one can already be serving: both are fed until the old one is gone, each under its own id.
/// `onPlay` runs when a viewer starts playing: the moment to ask the encoder for a key frame.
///
/// `@unchecked Sendable`: the server and its main context are driven only on the main-loop thread (or before it starts); the viewer counts are behind `lock`; the callbacks are set before `start()`.
public final class RTSPServer: @unchecked Sendable {
    public let endpoint: RTSPEndpoint
    public private(set) var boundPort = 0
    /// The frames each media's appsrc holds before it drops (see `configure(media:of:)`).
    static let mediaQueueFrames = 30
    private let server: UnsafeMutablePointer<GstRTSPServer>
    private let context: OpaquePointer
    private let loop: OpaquePointer
    private var thread: Thread?
    private var sourceID: guint = 0
    private let lock = NSLock()
    /// The clients playing now: from a PLAY until a PAUSE, a TEARDOWN or the connection's end. A client that only
    /// asks for the description (a health check) or holds a paused session is not watching.
    private var playing: Set<UInt> = []
    /// The clients that played at least once, for as long as they are connected.
    private var played: Set<UInt> = []
    private var _totalViewers = 0

    /// Identifies one media for as long as it is prepared.
    public typealias MediaID = UInt

    /// One path the server serves, with its own shared media and what happens to it. Callbacks are set before the
    /// server starts.
    public final class Mount: @unchecked Sendable {
        public let path: String
        /// A media was built: its picture appsrc (`in`) and, when the media carries sound, its `audio` appsrc.
        public var onMediaReady: (@Sendable (MediaID, AppSource, AppSource?) -> Void)?
        public var onMediaGone: (@Sendable (MediaID) -> Void)?
        /// A viewer started playing this mount's media.
        public var onPlay: (@Sendable () -> Void)?
        /// A sink added for a transport's first viewer dropped a packet it started with, stale or before a key frame
        /// (`SinkStartFilter`): those viewers wait for the next key frame. On the streaming thread.
        public var onStaleStart: (@Sendable () -> Void)?
        /// A media's viewers started playing it (true) or none plays it any more (false: all paused or gone, or a
        /// client only asked for the description). gst-rtsp-server's `new-state`, on the server's thread.
        public var onMediaPlaying: (@Sendable (MediaID, Bool) -> Void)?
        fileprivate let factory: UnsafeMutablePointer<GstRTSPMediaFactory>

        fileprivate init(path: String, factory: UnsafeMutablePointer<GstRTSPMediaFactory>) {
            self.path = path
            self.factory = factory
        }
    }

    /// The mount at the endpoint's path.
    public let main: Mount
    /// Every mount, the main one first; added to before the server starts, read after.
    private var mounts: [Mount] = []
    /// The mount of each prepared media, behind `lock`: a PLAY names the media it plays, not the mount.
    private var mediaMounts: [MediaID: Mount] = [:]
    public var onViewers: (@Sendable (Int) -> Void)?
    /// The login viewers give (`--rtsp-user`): the owner's password and each live watch link's token; nil: open.
    private let auth: UnsafeMutablePointer<GstRTSPAuth>?
    /// The clients that played through a watch link, by client, with the link (and a reference to the client, to
    /// close it when the link ends); behind `lock`, changed on the server's thread.
    private var linked: [UInt: (link: String, client: UnsafeMutableRawPointer)] = [:]
    private static let linkField = "pipcompose.link"
    private static let role = "viewer"

    public init(endpoint: RTSPEndpoint, mediaLaunch: String, title: String) {
        Gst.initialize()
        self.endpoint = endpoint
        server = gst_rtsp_server_new()
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        gst_rtsp_server_set_address(server, endpoint.host)
        gst_rtsp_server_set_service(server, String(endpoint.port))
        // A burst of connections waits in the kernel's queue instead of being refused.
        gst_rtsp_server_set_backlog(server, 1024)
        // Logins and TLS are both the auth object's: with TLS and no login, every viewer gets the viewer's role.
        auth = endpoint.user == nil && !endpoint.secure ? nil : gst_rtsp_auth_new()
        if let auth {
            gst_rtsp_server_set_auth(server, auth)
            if let user = endpoint.user, let password = endpoint.password {
                Self.addLogin(auth, user: user, password: password, link: nil)
            }
            if endpoint.user == nil {
                let anyone = gst_rtsp_token_new_empty()!
                cgst_structure_set_string(gst_rtsp_token_writable_structure(anyone), "media.factory.role", Self.role)
                gst_rtsp_auth_set_default_token(auth, anyone)
                gst_rtsp_token_unref(anyone)
            }
        }
        main = Mount(path: endpoint.path, factory: SharedMediaFactory.make(launch: "( \(mediaLaunch) )"))
        mount(main)
        Signals.connect(UnsafeMutableRawPointer(server), "client-connected") { [weak self] _, client in
            guard let self, let client else { return }
            let id = UInt(bitPattern: client)
            Self.sendWithoutDelay(client.assumingMemoryBound(to: GstRTSPClient.self))
            // Each of these is emitted once the request succeeded and was answered.
            Signals.connect(client, "play-request") { [weak self] _, context in
                guard let self else { return }
                // The request's session media is the media the viewer plays, which belongs to one mount.
                let c = context?.assumingMemoryBound(to: GstRTSPContext.self).pointee
                let media = c?.sessmedia.flatMap { gst_rtsp_session_media_get_media($0) } ?? c?.media
                let mount = media.flatMap { m in self.lock.withLock { self.mediaMounts[MediaID(bitPattern: m)] } }
                (mount ?? self.main).onPlay?()
                self.client(id, plays: true)
            }
            // The login is checked where a media is found (DESCRIBE, SETUP), not at PLAY: a SETUP through a watch link
            // marks the client as that link's.
            Signals.connect(client, "setup-request") { [weak self] _, context in
                guard let self, let token = context?.assumingMemoryBound(to: GstRTSPContext.self).pointee.token,
                      let link = gst_rtsp_token_get_string(token, Self.linkField) else { return }
                let name = String(cString: link)
                self.lock.withLock {
                    if self.linked[id] == nil { self.linked[id] = (name, g_object_ref(client)!) }
                }
            }
            for stopped in ["pause-request", "teardown-request"] {
                Signals.connect(client, stopped) { [weak self] _, _ in self?.client(id, plays: false) }
            }
            Signals.connect(client, "closed", noArguments: { [weak self] in
                guard let self else { return }
                // Let go of it once its own closing is over: dropping the last reference inside its "closed" left
                // GLib finalizing it with its lock held (an abort, "g_mutex_clear() called on … locked mutex").
                if let gone = self.lock.withLock({ self.linked.removeValue(forKey: id) }) {
                    self.onServerThread { g_object_unref(gone.client) }
                }
                self.client(id, plays: false, closed: true)
            })
        }
        Self.useSessionName(title, for: server)
    }

    /// The SDP session name viewers see (`s=` line; players show it as the stream's title), per server: a soak
    /// serves many streams from one process, each with its own title. Keyed by the server's mount points, which a
    /// client knows. Guarded by `titlesLock`.
    nonisolated(unsafe) private static var titles: [UnsafeMutableRawPointer: String] = [:]
    private static let titlesLock = NSLock()
    nonisolated(unsafe) private static var originalCreateSDP: (@convention(c) (UnsafeMutablePointer<GstRTSPClient>?,
        UnsafeMutablePointer<GstRTSPMedia>?) -> UnsafeMutablePointer<GstSDPMessage>?)?

    /// gst-rtsp-server names every session "Session streamed with GStreamer" and has no setter: its client
    /// class's `create_sdp` is wrapped once per process to put the title of the client's server there.
    private static func useSessionName(_ title: String, for server: UnsafeMutablePointer<GstRTSPServer>) {
        let mounts = gst_rtsp_server_get_mount_points(server)!
        defer { g_object_unref(UnsafeMutableRawPointer(mounts)) }
        titlesLock.withLock {
            titles[UnsafeMutableRawPointer(mounts)] = title
            guard originalCreateSDP == nil, let raw = g_type_class_ref(gst_rtsp_client_get_type()) else { return }
            let klass = raw.assumingMemoryBound(to: GstRTSPClientClass.self)
            originalCreateSDP = klass.pointee.create_sdp
            klass.pointee.create_sdp = { client, media in
                let original = RTSPServer.titlesLock.withLock { RTSPServer.originalCreateSDP }
                let sdp = original?(client, media)
                if let sdp, let client, let mounts = gst_rtsp_client_get_mount_points(client) {
                    defer { g_object_unref(UnsafeMutableRawPointer(mounts)) }
                    if let title = RTSPServer.titlesLock.withLock({ RTSPServer.titles[UnsafeMutableRawPointer(mounts)] }) {
                        gst_sdp_message_set_session_name(sdp, title)
                    }
                }
                return sdp
            }
        }
    }

    /// Serves `mediaLaunch` at `path` too (a rendition's picture), shared like the main mount and behind the same
    /// login. Before `start()`.
    public func addMount(path: String, mediaLaunch: String) -> Mount {
        let m = Mount(path: path, factory: SharedMediaFactory.make(launch: "( \(mediaLaunch) )"))
        mount(m)
        return m
    }

    private func mount(_ m: Mount) {
        let factory = m.factory
        gst_rtsp_media_factory_set_latency(factory, 0)
        Signals.connect(UnsafeMutableRawPointer(factory), "media-configure") { [weak self, weak m] _, media in
            guard let m else { return }
            self?.configure(media: media!.assumingMemoryBound(to: GstRTSPMedia.self), of: m)
        }
        if auth != nil { Self.permitViewers(factory) }
        let points = gst_rtsp_server_get_mount_points(server)!
        // The mount points take their own reference; the mount keeps its pointer for matching requests.
        g_object_ref(UnsafeMutableRawPointer(factory))
        gst_rtsp_mount_points_add_factory(points, m.path, factory)
        g_object_unref(UnsafeMutableRawPointer(points))
        mounts.append(m)
    }

    /// The URL of `mount` (the main one's by default).
    public func url(of mount: Mount) -> String {
        var e = endpoint
        if boundPort > 0 { e.port = boundPort }
        e.path = mount.path
        return e.url
    }

    /// Forgets the server's title (its mount points may be freed and their address reused).
    private static func forgetSessionName(for server: UnsafeMutablePointer<GstRTSPServer>) {
        let mounts = gst_rtsp_server_get_mount_points(server)!
        defer { g_object_unref(UnsafeMutableRawPointer(mounts)) }
        _ = titlesLock.withLock { titles.removeValue(forKey: UnsafeMutableRawPointer(mounts)) }
    }

    deinit {
        assert(thread == nil, "RTSPServer released without stop()")
        Self.forgetSessionName(for: server)
        for m in mounts { g_object_unref(UnsafeMutableRawPointer(m.factory)) }
        for entry in linked.values { g_object_unref(entry.client) }
        if let auth { g_object_unref(UnsafeMutableRawPointer(auth)) }
        g_main_loop_unref(loop)
        g_main_context_unref(context)
        g_object_unref(UnsafeMutableRawPointer(server))
    }

    /// Lets `user` in with `password` (HTTP Basic) as a viewer; a watch link's login carries the link's id, which a
    /// PLAY through it is known by.
    private static func addLogin(_ auth: UnsafeMutablePointer<GstRTSPAuth>, user: String, password: String, link: String?) {
        let basic = gst_rtsp_auth_make_basic(user, password)
        let token = gst_rtsp_token_new_empty()!
        let fields = gst_rtsp_token_writable_structure(token)
        cgst_structure_set_string(fields, "media.factory.role", role)
        if let link { cgst_structure_set_string(fields, linkField, link) }
        gst_rtsp_auth_add_basic(auth, basic, token)
        g_free(basic)
        gst_rtsp_token_unref(token)
    }

    /// Only a viewer (one who logged in, or anyone when there is no login) may see or build a mount's media; others
    /// get 401.
    private static func permitViewers(_ factory: UnsafeMutablePointer<GstRTSPMediaFactory>) {
        let permissions = gst_rtsp_permissions_new()!
        gst_rtsp_permissions_add_permission_for_role(permissions, role, "media.factory.access", 1)
        gst_rtsp_permissions_add_permission_for_role(permissions, role, "media.factory.construct", 1)
        gst_rtsp_media_factory_set_permissions(factory, permissions)
        gst_rtsp_permissions_unref(permissions)
    }

    /// Whether viewers log in (`--rtsp-user`): only then do watch links matter here.
    public var requiresLogin: Bool { endpoint.user != nil }

    /// Lets viewers in as `--rtsp-user` with watch link `link`'s token as the password.
    public func admit(watchLink link: String, token: String) {
        guard let auth, let user = endpoint.user else { return }
        Self.addLogin(auth, user: user, password: token, link: link)
    }

    /// The watch link `link` ended: its token logs nobody in any more, and the viewers it let in are disconnected
    /// (on the server's thread, where the clients live).
    public func refuse(watchLink link: String, token: String) {
        guard let auth, let user = endpoint.user else { return }
        // On the server's thread, where requests are checked: a request being let in holds the login's token
        // without a reference of its own.
        onServerThread { [self] in
            let basic = gst_rtsp_auth_make_basic(user, token)
            gst_rtsp_auth_remove_basic(auth, basic)
            g_free(basic)
            let clients = lock.withLock { linked.values.filter { $0.link == link }.map(\.client) }
            for c in clients { Self.hangUp(c.assumingMemoryBound(to: GstRTSPClient.self)) }
        }
    }

    /// Ends a client's connection the way a viewer that leaves does: its socket shut down, the server sees it end and
    /// tears its sessions down as for any viewer gone. Removing its sessions or closing it from here instead raced
    /// the shared media's TCP sending, which finalized a transport with its lock held (an abort, "g_mutex_clear()
    /// called on uninitialised or locked mutex", in about half the runs of the test).
    private static func hangUp(_ client: UnsafeMutablePointer<GstRTSPClient>) {
        guard let connection = gst_rtsp_client_get_connection(client),
              let socket = gst_rtsp_connection_get_read_socket(connection) else { return }
        var error: UnsafeMutablePointer<GError>?
        if g_socket_shutdown(socket, 1, 1, &error) == 0 { g_clear_error(&error) }
    }

    /// Viewers playing through each watch link now.
    public var viewersByLink: [String: Int] {
        lock.withLock {
            var counts: [String: Int] = [:]
            for (id, entry) in linked where playing.contains(id) { counts[entry.link, default: 0] += 1 }
            return counts
        }
    }

    /// Runs `work` on the server's main-loop thread.
    private func onServerThread(_ work: @escaping () -> Void) {
        let box = Unmanaged.passRetained(WorkBox(work)).toOpaque()
        g_main_context_invoke_full(context, 0, { data in
            Unmanaged<WorkBox>.fromOpaque(data!).takeUnretainedValue().work()
            return 0
        }, box, { data in Unmanaged<WorkBox>.fromOpaque(data!).release() })
    }

    private final class WorkBox {
        let work: () -> Void
        init(_ work: @escaping () -> Void) { self.work = work }
    }

    /// Viewers playing the stream now.
    public var viewers: Int { lock.withLock { playing.count } }
    /// Viewers that played, since the start.
    public var totalViewers: Int { lock.withLock { _totalViewers } }

    /// Turns Nagle's algorithm off on a client's connection (TCP_NODELAY), as gst-rtsp-server 1.22 does not. Over
    /// TCP a viewer's RTP packets are written into the RTSP connection; with Nagle on, a write smaller than a segment
    /// (on loopback every RTP packet: its MSS is 64 KiB) waits while earlier data is unacknowledged, and when the
    /// viewer's side has fallen into delayed ACKs (after its RTCP report every 5 s) a frame waited 40 ms for the
    /// ACK: probes over TCP read 45-52 ms once every 4-6 s, against 8-12 ms over UDP.
    private static func sendWithoutDelay(_ client: UnsafeMutablePointer<GstRTSPClient>) {
        guard let connection = gst_rtsp_client_get_connection(client),
              let socket = gst_rtsp_connection_get_write_socket(connection) else { return }
        var error: UnsafeMutablePointer<GError>?
        if g_socket_set_option(socket, Int32(IPPROTO_TCP), Int32(TCP_NODELAY), 1, &error) == 0 {
            // Not a TCP socket (a test's Unix socket): nothing to turn off.
            g_clear_error(&error)
        }
    }

    /// A client started playing, stopped (paused or tore down), or its connection ended; `onViewers` hears of each
    /// change of the count.
    private func client(_ id: UInt, plays: Bool, closed: Bool = false) {
        let changed = lock.withLock { () -> Int? in
            if plays && played.insert(id).inserted { _totalViewers += 1 }
            if closed { played.remove(id) }
            let was = playing.count
            if plays { playing.insert(id) } else { playing.remove(id) }
            return playing.count == was ? nil : playing.count
        }
        if let changed { onViewers?(changed) }
    }

    private func configure(media: UnsafeMutablePointer<GstRTSPMedia>, of mount: Mount) {
        guard let bin = gst_rtsp_media_get_element(media) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(bin)) }
        if let pipeline = gst_object_get_parent(cgst_object(UnsafeMutableRawPointer(bin))) {
            Self.configureSinks(UnsafeMutableRawPointer(pipeline)) { [weak mount] in mount?.onStaleStart?() }
            gst_object_unref(UnsafeMutableRawPointer(pipeline))
        }
        guard let src = gst_bin_get_by_name_recurse_up(cgst_bin(bin), "in") else { return }
        // Room for a second of frames: the burst after the frame loop caught up a stall (up to a second of frames,
        // FrameLoop.catchUpLimit) reaches the media faster than real time, and a busy machine may run its thread
        // late meanwhile. Encoded frames are small (about 10 KB at 1280x720); a full queue drops by group of
        // pictures (RTSPOutput.deliver).
        let feed = AppSource(takingOwnership: src, maxBuffers: Self.mediaQueueFrames, leaky: true)
        // Sound comes in packets of 21 ms: room for as long a wait as the picture's.
        let audio = gst_bin_get_by_name_recurse_up(cgst_bin(bin), "audio").map {
            AppSource(takingOwnership: $0, maxBuffers: 48, leaky: true)
        }
        let id = MediaID(bitPattern: media)
        lock.withLock { mediaMounts[id] = mount }
        Signals.connect(UnsafeMutableRawPointer(media), "unprepared", noArguments: { [weak self, weak mount] in
            _ = self?.lock.withLock { self?.mediaMounts.removeValue(forKey: id) }
            mount?.onMediaGone?(id)
        })
        Signals.connect(UnsafeMutableRawPointer(media), "new-state", integer: { [weak mount] state in
            mount?.onMediaPlaying?(id, state == Int32(GST_STATE_PLAYING.rawValue))
        })
        mount.onMediaReady?(id, feed, audio)
    }

    /// Every sink gst-rtsp-server adds to a media's pipeline (a multiudpsink for UDP viewers, an appsink for TCP
    /// ones, per stream) changes state without waiting for a buffer (async=false). gst-rtsp-server 1.22 adds the
    /// RTP sinks of a transport when its first viewer plays, behind a tee, while the live stream already flows,
    /// and leaves them async: when a UDP and a TCP viewer started together, the UDP sink of one stream could
    /// preroll on its first packet and wait for PLAYING, blocking the tee before the TCP sink was linked; that
    /// sink then never prerolled, so the pipeline never reached PLAYING again and the stream (the sound, or
    /// everything) stopped for every viewer of that media. Measured with a UDP and a TCP probe joining a just-started
    /// server at once: 3 starts in 52 before this, none in 46 after. Each sink also drops the packets that reach it
    /// already late at its start, and on the picture's stream those before its first key frame (`SinkStartFilter`).
    private static func configureSinks(_ pipeline: UnsafeMutableRawPointer, onStale: @escaping @Sendable () -> Void) {
        Signals.connect(pipeline, "element-added") { _, element in
            guard let element, cgst_is_base_sink(element) != 0 else { return }
            gst_util_set_object_arg(cgst_gobject(element), "async", "false")
            SinkStartFilter.attach(to: element, onStale: onStale)
        }
    }

    /// Binds the port and starts serving; a port in use is an error that says so.
    public func start() throws(GstError) {
        if endpoint.secure, let auth {
            guard let files = endpoint.tls else {
                throw GstError(element: "rtsp-server", message: "rtsps:// needs --tls-cert and --tls-key")
            }
            var error: UnsafeMutablePointer<GError>?
            guard let certificate = g_tls_certificate_new_from_files(files.certificate, files.key, &error) else {
                let why = error.map { String(cString: $0.pointee.message) } ?? "unreadable"
                g_clear_error(&error)
                throw GstError(element: "rtsp-server", message: "cannot serve RTSP over TLS with --tls-cert "
                               + "'\(files.certificate)' and --tls-key '\(files.key)': \(why); give a PEM certificate and "
                               + "its unencrypted key")
            }
            gst_rtsp_auth_set_tls_certificate(auth, certificate)
            g_object_unref(certificate)
        }
        sourceID = gst_rtsp_server_attach(server, context)
        guard sourceID != 0 else {
            throw GstError(element: "rtsp-server",
                           message: "cannot listen on \(endpoint.host):\(endpoint.port): the port is in use or the "
                           + "address is not local (another pipcompose?); choose another with --rtsp PORT/PATH")
        }
        boundPort = Int(gst_rtsp_server_get_bound_port(server))
        // The thread keeps the server alive until the loop quits.
        let t = Thread { [self] in
            g_main_context_push_thread_default(context)
            g_main_loop_run(loop)
            g_main_context_pop_thread_default(context)
        }
        t.name = "rtsp-server"
        thread = t
        t.start()
    }

    /// The URL viewers open.
    public var url: String {
        var e = endpoint
        if boundPort > 0 { e.port = boundPort }
        return e.url
    }

    public func stop() {
        guard thread != nil else { return }
        if sourceID != 0, let source = g_main_context_find_source_by_id(context, sourceID) {
            g_source_destroy(source)
        }
        g_main_loop_quit(loop)
        thread = nil
    }
}
