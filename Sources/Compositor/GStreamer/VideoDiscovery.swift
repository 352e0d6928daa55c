import CGst
import Foundation

/// What a video file holds, read by GStreamer's discoverer before anything plays: a scene that names a file
/// without pictures (a text, a sound file) is refused at its line, not found out at run time.
public enum VideoDiscovery {
    /// The size of `uri`'s first video stream; throws GStreamer's reason, or says the file holds no video.
    public static func firstPicture(of uri: String, timeout: TimeInterval = 10) throws(GstError) -> PixelSize {
        let name = URL(string: uri)?.lastPathComponent ?? uri
        let found: Discovered
        do { found = try Discovered.read(uri, timeout: timeout) } catch {
            switch error {
            case .noDiscoverer: throw GstError(element: "discoverer", message: "GStreamer's discoverer is missing")
            case .unreadable(let why): throw GstError(element: name, message: "cannot read it: \(why ?? "no answer")")
            case .missingPlugin(let why):
                throw GstError(element: name, message: "needs a GStreamer plugin that is not installed (\(why ?? "unknown format"))")
            case .timeout: throw GstError(element: name, message: "did not answer within \(Int(timeout)) s")
            case .notMedia(let why):
                throw GstError(element: name, message: "is not a video GStreamer can read: \(why ?? "unknown error")")
            }
        }
        guard let size = found.withFirstStream(.video, { stream in
            PixelSize(width: Int(gst_discoverer_video_info_get_width(stream)),
                      height: Int(gst_discoverer_video_info_get_height(stream)))
        }) else {
            throw GstError(element: name, message: "holds no video (is it a sound file or a picture?)")
        }
        return size
    }
}
