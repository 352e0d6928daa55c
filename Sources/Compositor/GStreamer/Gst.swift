import CGst
import CProcess
import Foundation

/// GStreamer's process-wide set-up, done once.
public enum Gst {
    private static let once: Void = {
        // Encoders, pictures and pipelines are made and dropped while a run goes on (a browser window's rendition,
        // a resize, a renewed page): their buffers of 256 KiB and more are mapped apart, so what is dropped goes back
        // to the system. With glibc's moving threshold, a run lost 0.7 MiB to its arenas for every window's rendition
        // made and dropped (106 MiB an hour with a window every 30 s); with this, 0.1 MiB.
        _ = cproc_map_large_blocks_apart(256 * 1024)
        // One arena per core (glibc makes up to 8 per core, 16 here): the blocks the many short-lived threads of
        // windows, sessions and pages leave behind gather in few heaps. With everything on for 25 minutes the
        // arenas' pages grew 22.7 MiB an hour (all of it anonymous memory); with 2 arenas 14.7, ending 11 MiB lower,
        // at the same CPU (bench/everything.sh, docs/BENCHMARKS.md).
        _ = cproc_limit_arenas(Int32(max(2, ProcessInfo.processInfo.activeProcessorCount)))
        gst_init(nil, nil)
    }()

    public static func initialize() { _ = once }

    /// Gives the free pages between live blocks in the allocator's heaps back to the system. A run makes and drops
    /// pipelines, encoders and threads all the time (windows' renditions, sessions, pushes that reconnect, renewed
    /// pages); the arenas keep what they leave scattered over pages that also hold live blocks, and glibc gives
    /// back only a heap's free top by itself. With everything on, a run rose 9.3 MiB an hour (within each picture
    /// size) over 40 minutes without this and 3.5 over the hour with it (docs/BENCHMARKS.md). Walks the heaps under
    /// their locks (0.4–0.9 ms with a run's 2 arenas): called from a timer, not the frame loop.
    public static func giveBackFreeMemory() { _ = cproc_give_back_free_memory() }

    /// The allocator's view (`cproc_heap_figures`): bytes in the blocks it has given out, the part of those mapped
    /// apart, and bytes in the free blocks of its heaps. For /metrics, beside the resident memory.
    public static func heapFigures() -> (givenOut: Int, mappedApart: Int, free: Int) {
        var givenOut = 0, mappedApart = 0, free = 0
        cproc_heap_figures(&givenOut, &mappedApart, &free)
        return (givenOut, mappedApart, free)
    }

    /// Whether an element factory exists (a plugin is installed), e.g. "x264enc".
    public static func hasElement(_ name: String) -> Bool {
        initialize()
        guard let f = gst_element_factory_find(name) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(f))
        return true
    }

    /// Runs GLib's default main context on this thread until `quit` is called (from any thread). Some elements
    /// post work there: WPE WebKit's source starts its web process from it.
    public static func runMainLoop(until quit: (@escaping @Sendable () -> Void) -> Void) {
        initialize()
        let loop = g_main_loop_new(nil, 0)!
        nonisolated(unsafe) let unsafeLoop = loop
        quit { g_main_loop_quit(unsafeLoop) }
        g_main_loop_run(loop)
        g_main_loop_unref(loop)
    }

    public static var version: String {
        initialize()
        return String(cString: gst_version_string())
    }
}

/// An error from GStreamer, with the element it came from and GStreamer's debug text.
public struct GstError: Error, CustomStringConvertible, Sendable {
    public var element: String
    public var message: String
    public var debug: String?
    /// Where in the pipeline it came from ("/GstPipeline:webrtc/GstBin:viewer3/…"), for errors read off a bus.
    public var path: String?

    public init(element: String, message: String, debug: String? = nil, path: String? = nil) {
        self.element = element
        self.message = message
        self.debug = debug
        self.path = path
    }

    public var description: String {
        "\(element): \(message)" + (debug.map { " (\($0.split(separator: "\n").last.map(String.init) ?? $0))" } ?? "")
    }

    /// Takes a `GError` set by a C call (and frees it).
    static func take(_ error: UnsafeMutablePointer<GError>?, element: String, fallback: String) -> GstError {
        guard let error else { return GstError(element: element, message: fallback) }
        defer { g_error_free(error) }
        return GstError(element: element, message: String(cString: error.pointee.message))
    }

    /// Reads an ERROR or WARNING message.
    static func from(message: UnsafeMutablePointer<GstMessage>, warning: Bool = false) -> GstError {
        var err: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        if warning { gst_message_parse_warning(message, &err, &debug) } else { gst_message_parse_error(message, &err, &debug) }
        let source = cgst_message_src(message).map { String(cString: cgst_object_name($0)) } ?? "pipeline"
        let path = cgst_message_src(message).flatMap { src -> String? in
            guard let p = gst_object_get_path_string(src) else { return nil }
            defer { g_free(p) }
            return String(cString: p)
        }
        let text = err.map { String(cString: $0.pointee.message) } ?? "unknown error"
        let dbg = debug.map { String(cString: $0) }
        if let err { g_error_free(err) }
        if let debug { g_free(debug) }
        return GstError(element: source, message: text, debug: dbg, path: path)
    }
}
