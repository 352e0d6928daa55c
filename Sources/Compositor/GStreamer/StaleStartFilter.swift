import CGst
import Foundation

/// Keeps the packets that reach a new RTSP sink already late from the viewer: drops them until the first packet
/// on time passes (at most `limit` of them), then lets everything through.
///
/// gst-rtsp-server 1.22 prepares a live media by blocking each stream on its first RTP packet, and lets it go when
/// the first viewer plays, a DESCRIBE, SETUP and PLAY later (0.3-0.6 s on loopback); the packets drawn meanwhile
/// overflow the media's bounded appsrc. That viewer got one stale packet per stream, then a hole (a sound gap of
/// about 530 ms in every probe of a fresh media), and a client that times its playout from its first packet plays
/// that much late. gst-rtsp-server 1.24 can drop such packets (`ensure-keyunit-on-start`); 1.22 cannot, so this
/// does it at the sinks. RTCP has no timestamps and always passes.
///
/// Its state is made on the thread that adds the sink and then read and written by the probe on the pad's
/// streaming threads. GStreamer hands the filter over through the pad's object lock, a GLib mutex on a futex that
/// Thread Sanitizer cannot see, so TSan reported the first use as a race with the filter's creation (it is not one:
/// the object lock orders them). The state is behind a lock TSan sees (NSLock: a pthread mutex; Swift's `Mutex` was
/// not enough, its atomics live in the uninstrumented standard library), taken once by the creating thread right
/// after it is made, so the hand-over is one TSan can see too; an uncontended lock per packet costs nothing measurable.
///
/// `@unchecked Sendable`: `seen` and `done` are only touched under `lock`.
final class StaleStartFilter: @unchecked Sendable {
    /// Older than this when it reaches the sink (running time against the sink's clock), a packet is stale.
    static let stale: Int64 = 100_000_000
    /// Packets a sink may drop at its start, at most (a machine so loaded that every packet is late drops none
    /// after these).
    static let limit = 64

    private let lock = NSLock()
    private var seen = 0
    private var done = false
    private var dropped = false
    private let onStale: @Sendable () -> Void

    private init(onStale: @escaping @Sendable () -> Void) { self.onStale = onStale }

    /// Installs the filter on `sink`'s sink pad; the probe keeps it alive until the pad goes. `onStale` is called
    /// once, on the streaming thread, when the filter first drops a packet (what the viewers needed to start
    /// decoding may have been in it).
    static func attach(to sink: UnsafeMutableRawPointer, onStale: @escaping @Sendable () -> Void) {
        guard let pad = gst_element_get_static_pad(cgst_element(sink), "sink") else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        let probe: GstPadProbeCallback = { pad, info, data in
            guard let pad, let info, let data else { return GST_PAD_PROBE_OK }
            let filter = Unmanaged<StaleStartFilter>.fromOpaque(data).takeUnretainedValue()
            return filter.keeps(cgst_probe_info_first_buffer(info), on: pad) ? GST_PAD_PROBE_OK : GST_PAD_PROBE_DROP
        }
        let destroy: GDestroyNotify = { data in Unmanaged<StaleStartFilter>.fromOpaque(data!).release() }
        let types = GstPadProbeType(rawValue: GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue)
        let filter = StaleStartFilter(onStale: onStale)
        filter.lock.withLock {}
        gst_pad_add_probe(pad, types, probe, Unmanaged.passRetained(filter).toOpaque(), destroy)
    }

    private func keeps(_ buffer: UnsafeMutablePointer<GstBuffer>?, on pad: UnsafeMutablePointer<GstPad>) -> Bool {
        let (keep, firstDrop) = lock.withLock { () -> (Bool, Bool) in
            guard !done else { return (true, false) }
            seen += 1
            guard seen <= Self.limit, let buffer, let late = Self.lateness(of: buffer, on: pad) else {
                done = true
                return (true, false)
            }
            if late > Self.stale {
                defer { dropped = true }
                return (false, !dropped)
            }
            done = true
            return (true, false)
        }
        if firstDrop { onStale() }
        return keep
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
