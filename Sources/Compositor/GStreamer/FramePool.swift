import CGst
import Foundation

/// A pool of video buffers of one size and format (BGRx to draw into, I420 to convert into), so frames need
/// no per-frame allocation. Replaced as a whole on resize.
///
/// It holds a fixed number of buffers, all made as it starts. When every one is still in use downstream (an encoder
/// that fell behind holds frames in its queue), a frame gets a buffer of its own, freed once it is done with, instead
/// of the pool growing: a pool without a limit kept each new high-water mark of frames in flight for good, a frame
/// (1.3 MiB at 1280x720) more after each rare stall, which the hour with everything on read as a rising memory.
///
/// `@unchecked Sendable`: a GstBufferPool is thread-safe; `info` is written once, in `init`; `made` is behind `lock`.
public final class FramePool: @unchecked Sendable {
    public enum Format: String, Sendable {
        case bgrx = "BGRx"
        /// BT.709 limited range: what the encoder takes without conversion.
        case i420 = "I420"
    }

    public let size: PixelSize
    public let format: Format
    let pool: UnsafeMutablePointer<GstBufferPool>
    var info = GstVideoInfo()
    public let caps: String
    /// How many buffers the pool holds.
    public let capacity: Int
    private let lock = NSLock()
    private var made: UInt64 = 0

    /// Buffers made outside the pool because all of its own were in use.
    public var oneOffs: UInt64 { lock.withLock { made } }

    /// The caps of a pool's buffers: what an encoder fed from it is told before its first frame.
    public static func caps(size: PixelSize, fps: Int, format: Format) -> String {
        "video/x-raw,format=\(format.rawValue),width=\(size.width),height=\(size.height),framerate=\(fps)/1,"
            + "pixel-aspect-ratio=1/1,colorimetry=\(format == .bgrx ? "sRGB" : "bt709")"
    }

    public init(size: PixelSize, fps: Int, format: Format = .bgrx, buffers: Int = 4) throws(GstError) {
        Gst.initialize()
        self.size = size
        self.format = format
        capacity = max(1, buffers)
        caps = Self.caps(size: size, fps: fps, format: format)
        guard let c = gst_caps_from_string(caps) else { throw GstError(element: "pool", message: "bad caps \(caps)") }
        defer { gst_caps_unref(c) }
        gst_video_info_init(&info)
        guard gst_video_info_from_caps(&info, c) != 0 else { throw GstError(element: "pool", message: "bad caps \(caps)") }
        pool = gst_video_buffer_pool_new()
        let config = gst_buffer_pool_get_config(pool)
        gst_buffer_pool_config_set_params(config, c, guint(info.size), guint(capacity), guint(capacity))
        guard gst_buffer_pool_set_config(pool, config) != 0, gst_buffer_pool_set_active(pool, 1) != 0 else {
            gst_object_unref(UnsafeMutableRawPointer(pool))
            throw GstError(element: "pool", message: "cannot set up a buffer pool for \(size)")
        }
    }

    deinit {
        gst_buffer_pool_set_active(pool, 0)
        gst_object_unref(UnsafeMutableRawPointer(pool))
    }

    /// A buffer from the pool, which goes back to the pool when the last reference goes; when all of the pool's are in
    /// use, a buffer of the same layout of its own (never waiting for one to come back), freed when the last
    /// reference goes.
    public func acquire() throws(GstError) -> MediaBuffer {
        var buffer: UnsafeMutablePointer<GstBuffer>?
        var params = GstBufferPoolAcquireParams()
        params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT
        let r = gst_buffer_pool_acquire_buffer(pool, &buffer, &params)
        if r == GST_FLOW_OK, let buffer { return MediaBuffer(takingOwnership: buffer) }
        // EOS with DONTWAIT: every buffer of the pool is out.
        guard r == GST_FLOW_EOS, let own = gst_buffer_new_allocate(nil, info.size, nil) else {
            throw GstError(element: "pool", message: "no buffer (flow \(r.rawValue))")
        }
        lock.withLock { made += 1 }
        return MediaBuffer(takingOwnership: own)
    }

    /// The frame whose picture a buffer's memory holds, as `setFrameHeld` recorded it; nil for memory never
    /// written through this pool's producer. Kept on the GstMemory itself (as qdata), so it goes when the memory
    /// goes: new memory at the address of freed memory is not mistaken for it.
    func frameHeld(in buffer: MediaBuffer) -> Int64? {
        guard let memory = gst_buffer_peek_memory(buffer.pointer, 0),
              let tag = gst_mini_object_get_qdata(Self.object(memory), Self.frameQuark) else { return nil }
        return Int64(Int(bitPattern: tag)) - 1
    }

    func setFrameHeld(_ frame: Int64, in buffer: MediaBuffer) {
        guard let memory = gst_buffer_peek_memory(buffer.pointer, 0) else { return }
        gst_mini_object_set_qdata(Self.object(memory), Self.frameQuark,
                                  UnsafeMutableRawPointer(bitPattern: Int(frame + 1)), nil)
    }

    private static let frameQuark = g_quark_from_string("pipcompose-frame-held")
    private static func object(_ memory: UnsafeMutablePointer<GstMemory>) -> UnsafeMutablePointer<GstMiniObject> {
        UnsafeMutableRawPointer(memory).assumingMemoryBound(to: GstMiniObject.self)
    }

    /// Maps an I420 `buffer` (for writing, unless `readOnly`) and runs `body` with its planes.
    public func withPlanes<T>(_ buffer: MediaBuffer, readOnly: Bool = false,
                              _ body: (I420Converter.Planes) throws -> T) throws -> T {
        var frame = GstVideoFrame()
        guard gst_video_frame_map(&frame, &info, buffer.pointer, readOnly ? GST_MAP_READ : GST_MAP_WRITE) != 0 else {
            throw GstError(element: "pool", message: "cannot map a video buffer")
        }
        defer { gst_video_frame_unmap(&frame) }
        func plane(_ i: guint) -> UnsafeMutablePointer<UInt8> {
            cgst_video_frame_plane(&frame, i)!.assumingMemoryBound(to: UInt8.self)
        }
        return try body(I420Converter.Planes(
            y: plane(0), yStride: Int(cgst_video_frame_plane_stride(&frame, 0)),
            u: plane(1), uStride: Int(cgst_video_frame_plane_stride(&frame, 1)),
            v: plane(2), vStride: Int(cgst_video_frame_plane_stride(&frame, 2))))
    }
}
