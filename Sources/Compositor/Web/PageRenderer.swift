import CGst
import CKernels
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The page's own process (`pipcompose web-page`, started by `PageProcess`): WPE WebKit renders the widget's page
/// through `wpevideosrc`, and each frame that differs from the last goes to standard output (`PageWire`); commands
/// come on standard input. It runs apart from pipcompose so that a page that crashes, hangs or eats memory takes only
/// this process with it: wpesrc 1.22 waits for a first frame with no timeout and has no handler for a crashed web
/// process.
///
/// The page's size is WebKit's view's, changed on WebKit's own thread (`WpeView`): its CSS re-lays it and its
/// state stays. The caps stay the viewport's (the largest size): new caps are applied by wpesrc 1.22 from the
/// streaming thread without its lock, which aborted the process in 1 of 4 resizes here. Each frame carries its own
/// size (its video meta), so a frame of the old size after a resize is read as what it is, never as garbage
/// (GStreamer #4094). Before, the page sat in an iframe of the widget's size: WebKit then drew half as many frames
/// for the same CPU.
public final class PageRenderer: @unchecked Sendable {
    public let location: String
    public let fps: Int
    /// wpesrc's picture, fixed; the page's size within it, which the widget changes.
    public let viewport: PixelSize
    /// Behind `stateLock`: the streaming thread crops to it.
    private var size: PixelSize
    private var pipeline: Pipeline?
    private var sink: AppSink?
    /// WebKit's view, once wpevideosrc made it: its size and the address it shows.
    private var view: WpeView?
    /// Writes to standard output come from the streaming thread (frames) and the heartbeat (messages).
    private let writeLock = NSLock()
    /// The last frame sent, to send only frames that changed; and frames WebKit made (the heartbeat's count).
    private var last: [UInt8] = []
    private var lastSize = PixelSize(width: 0, height: 0)
    private var made = 0
    /// Which of WebKit's frames each recent buffer copies (`WpeView.framesHanded` as wpesrc made it), by timestamp,
    /// behind `stateLock`; and the one the last frame looked at copied (0: not known).
    private var handed: [(pts: GstClockTime, count: UInt64)] = []
    private var lastHanded: UInt64 = 0
    private let stateLock = NSLock()
    /// On the scene's clock (`pipcompose render`): a picture is handed over only when asked for (`{"grab": N}`, once
    /// the page drew frame N), and then always, with `{"grabbed": N}` after it.
    public let stepped: Bool
    /// The frame asked for, and WebKit's frame count when it was: the picture must copy a frame taken since (behind
    /// `stateLock`).
    private var grab: (frame: Int64, after: UInt64)?

    public init(location: String, viewport: PixelSize, size: PixelSize, fps: Int, stepped: Bool = false) {
        self.location = location
        self.stepped = stepped
        self.viewport = viewport
        self.size = PixelSize(width: min(size.width, viewport.width), height: min(size.height, viewport.height))
        self.fps = fps
    }

    /// The pipeline: the page at `size` and `fps`, premultiplied BGRA (what WebKit draws), newest frame only.
    static func launch(location: String, size: PixelSize, fps: Int) -> String {
        """
        wpevideosrc name=page location="\(PipelineTemplate.quoted(location))" draw-background=false
        ! capsfilter name=size caps=\(caps(size, fps))
        ! queue max-size-buffers=1 leaky=downstream
        ! appsink name=out
        """
    }

    static func caps(_ size: PixelSize, _ fps: Int) -> String {
        "video/x-raw,format=BGRA,width=\(size.width),height=\(size.height),framerate=\(fps)/1"
    }

    /// Runs until standard input closes (the widget is done with it) or the page's pipeline fails; returns the
    /// exit status.
    public func run() -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        Gst.initialize()
        let p: Pipeline
        do {
            p = try Pipeline(name: "page", launch: Self.launch(location: location, size: viewport, fps: fps))
        } catch {
            send(["error": "\(error)"])
            return 2
        }
        if let src = p.element(named: "page") {
            view = WpeView(watching: src, size: size)
            noteHandedFrames(src)
            gst_object_unref(UnsafeMutableRawPointer(src))
        }
        sink = p.appSink(named: "out", dropWhenFull: true, onSample: { [weak self] buffer, caps in
            self?.frame(buffer, caps)
        }, onEOS: { [weak self] in self?.send(["error": "the page's stream ended"]) })
        pipeline = p
        do {
            try p.play(onEvent: { [weak self] event in
                if case .error(let e) = event {
                    self?.send(["error": "\(e.element): \(e.message)"])
                    exit(3)
                }
            })
        } catch {
            send(["error": "\(error)"])
            return 2
        }
        startHeartbeat()
        // Commands on a thread of their own; this one runs GLib's default main context, which WPE needs.
        Gst.runMainLoop { quit in
            let t = Thread { [self] in
                while let line = readLine() { command(line) }
                quit()
            }
            t.name = "page-commands"
            t.start()
        }
        view?.stop()
        _ = p.stop(drain: false, timeout: 2)
        return 0
    }

    private func frame(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        guard stepped else { return deliver(buffer, caps) }
        let pts = cgst_buffer_pts(buffer.pointer)
        let asked = stateLock.withLock { () -> Int64? in
            guard let grab else { return nil }
            // A buffer made before WebKit handed the step's picture over copies an older one: not this one.
            let copies = handed.last { $0.pts == pts }?.count ?? 0
            return copies != 0 && grab.after != 0 && copies < grab.after ? nil : grab.frame
        }
        guard let asked else { return }
        deliver(buffer, caps)
        stateLock.withLock { grab = nil }
        send(["grabbed": .number(Double(asked))])
    }

    /// Sends the buffer's picture, unless it is the last one sent again.
    private func deliver(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        // The frame's own size (the view's when WebKit drew it), else its caps'.
        guard let layout = buffer.videoLayout ?? caps?.videoSize.map({ ($0, $0.width * 4, 0) }) else { return }
        let picture = layout.size
        let wanted = stateLock.withLock { () -> PixelSize in
            made += 1
            return size
        }
        // Whole pictures within the viewport only; the part the widget wants of it (all of it, unless the view has
        // not taken a smaller size yet).
        guard picture.width <= viewport.width, picture.height <= viewport.height, layout.stride >= picture.width * 4,
              layout.offset + layout.stride * (picture.height - 1) + picture.width * 4 <= buffer.size else { return }
        let crop = PixelSize(width: min(wanted.width, picture.width), height: min(wanted.height, picture.height))
        // A copy of the same frame of WebKit's as the last one looked at is that picture again: not even compared.
        let pts = cgst_buffer_pts(buffer.pointer)
        let copies = stateLock.withLock { handed.last { $0.pts == pts }?.count } ?? 0
        if copies != 0, copies == lastHanded, crop == lastSize { return }
        let rowBytes = crop.width * 4, stride = layout.stride, bytes = rowBytes * crop.height
        // Compared with the last picture sent where it lies, row by row, and copied only when it changed: a page
        // that is still costs a comparison a frame, not a copy, and nothing crosses to the widget.
        guard let changed = buffer.withBytes({ raw -> Bool in
            let src = raw.baseAddress! + layout.offset
            var differs = crop != lastSize || last.count != bytes
            if !differs {
                differs = last.withUnsafeBytes { old in
                    (0..<crop.height).contains { y in memcmp(src + y * stride, old.baseAddress! + y * rowBytes, rowBytes) != 0 }
                }
            }
            guard differs else { return false }
            if last.count != bytes { last = [UInt8](repeating: 0, count: bytes) }
            last.withUnsafeMutableBytes { dst in
                for y in 0..<crop.height { memcpy(dst.baseAddress! + y * rowBytes, src + y * stride, rowBytes) }
            }
            lastSize = crop
            return true
        }) else { return }
        // `last` is this picture now (compared the same, or copied): a later copy of it need not be compared.
        lastHanded = copies
        guard changed else { return }
        let opaque = last.withUnsafeBytes { ck_bgra_opaque($0.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes / 4) } != 0
        write(PageWire.head(opaque ? .opaqueFrame : .frame, crop.width, crop.height), last)
    }

    /// Notes, as each buffer leaves wpesrc (on its streaming thread, before the queue that may drop it), which of
    /// WebKit's frames it copies. The count stays 0 where it cannot be made, and then every buffer is compared.
    private func noteHandedFrames(_ src: UnsafeMutablePointer<GstElement>) {
        guard let pad = gst_element_get_static_pad(src, "src") else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        let probe: GstPadProbeCallback = { _, info, data in
            guard let info, let data, let buffer = cgst_probe_info_first_buffer(info) else { return GST_PAD_PROBE_OK }
            let renderer = Unmanaged<PageRenderer>.fromOpaque(data).takeUnretainedValue()
            let pts = cgst_buffer_pts(buffer), count = WpeView.framesHanded
            guard pts != cgst_clock_time_none() else { return GST_PAD_PROBE_OK }
            renderer.stateLock.withLock {
                if renderer.handed.count == 8 { renderer.handed.removeFirst() }
                renderer.handed.append((pts, count))
            }
            return GST_PAD_PROBE_OK
        }
        let destroy: GDestroyNotify = { data in Unmanaged<PageRenderer>.fromOpaque(data!).release() }
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, probe, Unmanaged.passRetained(self).toOpaque(), destroy)
    }

    private func command(_ line: String) {
        guard let data = line.data(using: .utf8),
              let c = try? JSONDecoder().decode([String: JSONValue].self, from: data), let pipeline else { return }
        if case .array(let wh)? = c["size"], wh.count == 2, case .number(let w) = wh[0], case .number(let h) = wh[1],
           w >= 1, h >= 1 {
            let next = PixelSize(width: min(Int(w), viewport.width), height: min(Int(h), viewport.height))
            stateLock.withLock { size = next }
            view?.resize(to: next)
            pipeline.emit("run-javascript", "window.__pc && __pc.resize(\(next.width), \(next.height))",
                          onElementNamed: "page")
        }
        if case .number(let n)? = c["grab"] {
            stateLock.withLock { grab = (Int64(n), WpeView.framesHanded) }
        }
        if case .string(let script)? = c["js"] { pipeline.emit("run-javascript", script, onElementNamed: "page") }
        if case .string(let url)? = c["location"] { pipeline.set("location", url, onElementNamed: "page") }
        // (A renewal's new launch is swapped in on this answer: it shows the process reads and writes now.)
        if case .number(let n)? = c["ping"] { send(["pong": .number(n)]) }
    }

    private func startHeartbeat() {
        let t = Thread { [weak self] in
            while let self {
                Thread.sleep(forTimeInterval: 1)
                var message: [String: JSONValue] = ["alive": .number(Double(self.stateLock.withLock { self.made })),
                                                    "handed": .number(Double(WpeView.framesHanded))]
                if let uri = self.view?.uri { message["uri"] = .string(uri) }
                self.send(message)
            }
        }
        t.name = "page-heartbeat"
        t.start()
    }

    private func send(_ message: [String: JSONValue]) {
        guard let json = try? JSONEncoder().encode(message) else { return }
        write(PageWire.head(.message, json.count, 0), Array(json))
    }

    private func send(_ message: [String: String]) { send(message.mapValues { JSONValue.string($0) }) }

    /// Head and payload as one write under the lock; the widget gone (EPIPE) ends this process.
    private func write(_ head: [UInt8], _ payload: [UInt8]) {
        writeLock.withLock {
            for part in [head, payload] {
                var sent = 0
                while sent < part.count {
                    let n = part.withUnsafeBytes { Glibc.write(1, $0.baseAddress! + sent, part.count - sent) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { exit(0) }
                    sent += n
                }
            }
        }
    }
}
