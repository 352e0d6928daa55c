import CGst
import CWpeView
import Foundation

/// WebKit's view inside a page's `wpevideosrc`, reached through the element's "configure-web-view" signal
/// (Sources/CWpeView): the page is resized there, on WebKit's own thread, instead of by new caps (which wpesrc 1.22
/// applies from the streaming thread without its lock: it aborted), and the address it shows is read from it.
///
/// Owns the one reference the watcher holds to the C object; WebKit's thread holds its own while its signal handlers
/// and queued resizes may still use it, so the memory goes when the last of them lets go. `stop()` is called when the
/// pipeline stops: nothing more is done to the view after it.
///
/// `@unchecked Sendable`: every call goes through the C object's lock.
public final class WpeView: @unchecked Sendable {
    private let view: OpaquePointer

    /// Watches `src` (a wpevideosrc before it starts) for its view, which is made `size` as soon as it exists.
    public init(watching src: UnsafeMutablePointer<GstElement>, size: PixelSize) {
        view = cwpe_view_watch(UnsafeMutableRawPointer(src), UInt32(size.width), UInt32(size.height))
    }

    deinit {
        cwpe_view_forget(view)
        cwpe_view_release(view)
    }

    /// Asks for the view at `size` (done on WebKit's thread); false when the view cannot be resized.
    @discardableResult
    public func resize(to size: PixelSize) -> Bool {
        cwpe_view_resize(view, UInt32(size.width), UInt32(size.height)) != 0
    }

    /// What the view shows now, or nil before it loaded anything.
    public var uri: String? {
        guard let uri = cwpe_view_uri(view) else { return nil }
        defer { free(uri) }
        return String(cString: uri)
    }

    /// The view is going away (the pipeline stops): nothing more is done to it.
    public func stop() { cwpe_view_forget(view) }

    /// How many times wpesrc took a new frame from WebKit's view in this process; 0 until the first, and always 0
    /// where the count cannot be made (the executable must export the function that counts them: Package.swift).
    public static var framesHanded: UInt64 { UInt64(cwpe_frames_handed()) }
}
