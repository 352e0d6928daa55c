import CGst
import Foundation

/// Makes a new RTSP sink's first packet one its viewers can start from: it drops the packets that reach the sink
/// already late, then, on the picture's stream, the packets before the next key frame; after that everything
/// passes.
///
/// Stale packets: gst-rtsp-server 1.22 prepares a live media by blocking each stream on its first RTP packet, and
/// lets it go when the first viewer plays, a DESCRIBE, SETUP and PLAY later (0.3-0.6 s on loopback); the packets
/// drawn meanwhile overflow the media's bounded appsrc. That viewer got one stale packet per stream, then a hole (a
/// sound gap of about 530 ms in every probe of a fresh media), and a client that times its playout from its first
/// packet plays that much late. gst-rtsp-server 1.24 can drop such packets (`ensure-keyunit-on-start`); 1.22
/// cannot, so this does it at the sinks. At most `limit` are dropped (on a machine so loaded that every packet is
/// late, none after these).
///
/// Key frame: when the stale packets held the media's key frame (a viewer 100 ms away: its PLAY comes late), or
/// when a viewer of another transport joins a media others watch (its sink is added to a running stream), the
/// first packets on time are the middle of a group of pictures. ffmpeg's decoder skips pictures it has no
/// reference for; GStreamer's (avdec_h264) shows them, flat grey with the moving parts smeared on it, until the
/// next key frame (3 to 15 pictures). So the sink waits for the first packet of a key access unit: rtph264pay
/// leaves DELTA_UNIT off that one packet of each key frame and sets it on every other. The sound's packets, and
/// RTCP, carry no DELTA_UNIT and pass at once. `onStale` asks for the key frame; if none comes within `keyWait` of
/// running time, the sink gives up waiting and lets everything through.
///
/// Its state is made on the thread that adds the sink and then read and written by the probe on the pad's
/// streaming threads. GStreamer hands the filter over through the pad's object lock, a GLib mutex on a futex that
/// Thread Sanitizer cannot see, so TSan reported the first use as a race with the filter's creation (it is not one:
/// the object lock orders them). The state is behind a lock TSan sees (NSLock: a pthread mutex; Swift's `Mutex` was
/// not enough, its atomics live in the uninstrumented standard library), taken once by the creating thread right
/// after it is made, so the hand-over is one TSan can see too; an uncontended lock per packet costs nothing measurable.
///
/// `@unchecked Sendable`: the state is only touched under `lock`.
final class SinkStartFilter: @unchecked Sendable {
    /// Older than this when it reaches the sink (running time against the sink's clock), a packet is stale.
    static let stale: Int64 = 100_000_000
    /// Stale packets a sink may drop at its start, at most.
    static let limit = 64
    /// How long (running time) a sink waits for a key frame before it lets the stream through anyway.
    static let keyWait: Int64 = 2_000_000_000

    private enum Phase {
        case stale(seen: Int)
        /// Since the running time of the first packet on time.
        case key(since: Int64?)
        case open
    }

    private let lock = NSLock()
    private var phase = Phase.stale(seen: 0)
    private var dropped = false
    private let onStale: @Sendable () -> Void

    private init(onStale: @escaping @Sendable () -> Void) { self.onStale = onStale }

    /// Installs the filter on `sink`'s sink pad; the probe keeps it alive until the pad goes. `onStale` is called
    /// once, on the streaming thread, when the filter first drops a packet: what the viewers needed to start
    /// decoding was in it, or has not come yet.
    static func attach(to sink: UnsafeMutableRawPointer, onStale: @escaping @Sendable () -> Void) {
        guard let pad = gst_element_get_static_pad(cgst_element(sink), "sink") else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        let probe: GstPadProbeCallback = { pad, info, data in
            guard let pad, let info, let data else { return GST_PAD_PROBE_OK }
            let filter = Unmanaged<SinkStartFilter>.fromOpaque(data).takeUnretainedValue()
            return filter.keeps(cgst_probe_info_first_buffer(info), on: pad) ? GST_PAD_PROBE_OK : GST_PAD_PROBE_DROP
        }
        let destroy: GDestroyNotify = { data in Unmanaged<SinkStartFilter>.fromOpaque(data!).release() }
        let types = GstPadProbeType(rawValue: GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue)
        let filter = SinkStartFilter(onStale: onStale)
        filter.lock.withLock {}
        gst_pad_add_probe(pad, types, probe, Unmanaged.passRetained(filter).toOpaque(), destroy)
    }

    private func keeps(_ buffer: UnsafeMutablePointer<GstBuffer>?, on pad: UnsafeMutablePointer<GstPad>) -> Bool {
        let (keep, firstDrop) = lock.withLock { () -> (Bool, Bool) in
            let keep = decide(buffer, on: pad)
            defer { if !keep { dropped = true } }
            return (keep, !keep && !dropped)
        }
        if firstDrop { onStale() }
        return keep
    }

    /// Under `lock`.
    private func decide(_ buffer: UnsafeMutablePointer<GstBuffer>?, on pad: UnsafeMutablePointer<GstPad>) -> Bool {
        guard let buffer else {
            phase = .open
            return true
        }
        if case .stale(let seen) = phase {
            if seen < Self.limit, let late = Self.lateness(of: buffer, on: pad), late > Self.stale {
                phase = .stale(seen: seen + 1)
                return false
            }
            phase = .key(since: nil)
        }
        guard case .key(let since) = phase else { return true }
        let running = PadTime.runningTime(of: buffer, on: pad).map { Int64($0) }
        if cgst_buffer_is_delta(buffer) == 0 || running == nil {
            phase = .open
            return true
        }
        let start = since ?? running!
        if running! - start > Self.keyWait {
            phase = .open
            return true
        }
        phase = .key(since: start)
        return false
    }

    /// How long ago `buffer` was due, by the segment on `pad` and the clock of the pad's element; nil when unknown.
    static func lateness(of buffer: UnsafeMutablePointer<GstBuffer>, on pad: UnsafeMutablePointer<GstPad>) -> Int64? {
        guard let running = PadTime.runningTime(of: buffer, on: pad) else { return nil }
        guard let element = gst_pad_get_parent_element(pad) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(element)) }
        guard let clock = gst_element_get_clock(element) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(clock)) }
        let now = Int64(gst_clock_get_time(clock)) - Int64(gst_element_get_base_time(element))
        return now - Int64(running)
    }
}
