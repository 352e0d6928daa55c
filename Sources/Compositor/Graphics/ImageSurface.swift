import CPango
import Foundation

/// Errors from Cairo, with its status text.
public struct CairoError: Error, CustomStringConvertible {
    public let operation: String
    public let status: String
    public var description: String { "\(operation) failed: \(status)" }

    init(_ operation: String, _ status: cairo_status_t) {
        self.operation = operation
        self.status = String(cString: cairo_status_to_string(status))
    }
}

/// Owns one `cairo_surface_t` holding pixels in memory.
///
/// `RGB24` is GStreamer's `BGRx` byte for byte: what is drawn here converts to video without reordering.
public final class ImageSurface {
    public enum Format: Sendable {
        /// Opaque, 4 bytes a pixel, the 4th unused: GStreamer `BGRx`.
        case rgb24
        /// Premultiplied alpha: GStreamer `BGRA` only after un-premultiplying.
        case argb32

        var cairo: cairo_format_t { self == .rgb24 ? CAIRO_FORMAT_RGB24 : CAIRO_FORMAT_ARGB32 }
    }

    public let pointer: OpaquePointer
    public let width: Int
    public let height: Int
    public let format: Format

    /// A new surface whose memory Cairo owns.
    public init(width: Int, height: Int, format: Format = .rgb24) throws {
        let s = cairo_image_surface_create(format.cairo, Int32(width), Int32(height))!
        let status = cairo_surface_status(s)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(s)
            throw CairoError("cairo_image_surface_create \(width)x\(height)", status)
        }
        pointer = s
        self.width = width
        self.height = height
        self.format = format
    }

    /// A new surface whose memory is a mapping of its own, given back to the system when Cairo lets the surface go.
    /// For surfaces made and dropped while a run goes on (a web page's pictures, at each resize and renewal): glibc
    /// keeps freed blocks of a few MiB in the heap of the thread's arena that made them, and a run whose pages were
    /// renewed grew by two pictures (7 MiB at 1280x720) each time, in new arenas; memory mapped apart does not stay.
    public static func mapped(width: Int, height: Int, format: Format) throws -> ImageSurface {
        let stride = Int(cairo_format_stride_for_width(format.cairo, Int32(width)))
        guard stride > 0, width > 0, height > 0 else {
            throw CairoError("cairo_image_surface_create_for_data \(width)x\(height)", CAIRO_STATUS_INVALID_SIZE)
        }
        let length = stride * height
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              base != MAP_FAILED else {
            throw CairoError("mmap of \(length) bytes for \(width)x\(height)", CAIRO_STATUS_NO_MEMORY)
        }
        let s = cairo_image_surface_create_for_data(base.assumingMemoryBound(to: UInt8.self), format.cairo,
                                                    Int32(width), Int32(height), Int32(stride))!
        let mapping = UnsafeMutablePointer<Mapping>.allocate(capacity: 1)
        mapping.initialize(to: Mapping(base: base, length: length))
        let status = cairo_surface_status(s) == CAIRO_STATUS_SUCCESS
            ? cairo_surface_set_user_data(s, mappingKey, mapping, { raw in
                guard let m = raw?.assumingMemoryBound(to: Mapping.self) else { return }
                munmap(m.pointee.base, m.pointee.length)
                m.deallocate()
            })
            : cairo_surface_status(s)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(s)
            munmap(base, length)
            mapping.deallocate()
            throw CairoError("cairo_image_surface_create_for_data \(width)x\(height)", status)
        }
        return ImageSurface(takingOwnership: s)
    }

    private struct Mapping {
        let base: UnsafeMutableRawPointer
        let length: Int
    }

    /// The key the mapping of a `mapped` surface is kept under (Cairo compares its address only).
    nonisolated(unsafe) private static let mappingKey = UnsafeMutablePointer<cairo_user_data_key_t>.allocate(capacity: 1)

    /// Takes over a surface Cairo created for us (transfer full).
    init(takingOwnership s: OpaquePointer) {
        pointer = s
        width = Int(cairo_image_surface_get_width(s))
        height = Int(cairo_image_surface_get_height(s))
        format = cairo_image_surface_get_format(s) == CAIRO_FORMAT_RGB24 ? .rgb24 : .argb32
    }

    deinit {
        cairo_surface_destroy(pointer)
    }

    public var stride: Int { Int(cairo_image_surface_get_stride(pointer)) }

    /// Makes pending drawing visible in the memory.
    public func flush() { cairo_surface_flush(pointer) }

    /// Tells Cairo the memory was changed behind its back.
    public func markDirty() { cairo_surface_mark_dirty(pointer) }

    /// Reads pixel (x, y) as straight RGBA bytes.
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        flush()
        let data = cairo_image_surface_get_data(pointer)!
        let p = data + y * stride + x * 4
        // Cairo stores native-endian 32-bit ARGB: on little-endian machines the bytes are B, G, R, A.
        let a = format == .rgb24 ? 255 : p[3]
        return (p[2], p[1], p[0], a)
    }

    /// The first byte of the pixels, for a reader that keeps drawing and reading in turn on one thread (the frame
    /// producer converts straight from it); valid while the surface lives. Call `flush()` after drawing first.
    var pixels: UnsafePointer<UInt8> { UnsafePointer(cairo_image_surface_get_data(pointer)!) }

    /// Calls `body` with the rows of pixels, 4 bytes each (B, G, R, A/x on little-endian machines).
    public func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        flush()
        let data = cairo_image_surface_get_data(pointer)!
        return try body(UnsafeRawBufferPointer(start: data, count: stride * height))
    }

    /// Lets `body` write the pixels of `rect` (whole pixels) directly, then tells Cairo they changed.
    public func withMutableBytes<T>(dirty rect: (x: Int, y: Int, width: Int, height: Int),
                                    _ body: (UnsafeMutablePointer<UInt8>) throws -> T) rethrows -> T {
        flush()
        let data = cairo_image_surface_get_data(pointer)!
        defer { cairo_surface_mark_dirty_rectangle(pointer, Int32(rect.x), Int32(rect.y), Int32(rect.width), Int32(rect.height)) }
        return try body(data)
    }

    /// Writes the surface as PNG; the error names the path.
    public func writePNG(to path: String) throws {
        flush()
        let status = cairo_surface_write_to_png(pointer, path)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw CairoError("writing PNG '\(path)'", status)
        }
    }

    /// Loads a PNG with Cairo's own reader.
    public static func readPNG(path: String) throws -> ImageSurface {
        let s = cairo_image_surface_create_from_png(path)!
        let status = cairo_surface_status(s)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(s)
            throw CairoError("reading PNG '\(path)'", status)
        }
        return ImageSurface(takingOwnership: s)
    }
}
