import Foundation

/// Something that happened in a running session, typed where it happens; the event stream (`/v1/events`, `ctl
/// events`) carries it as `type` and string `details`, and the log says it in one line. Adding a case makes the
/// compiler ask for its `kind`, and a test checks docs/openapi.yaml lists every kind.
public enum SessionEvent: Sendable, Equatable {
    // Outputs started and stopped at run time (the PiP controller's will/did start/stop, failed to start).
    case willStart(output: String)
    case didStart(output: String)
    case failedToStart(output: String, reason: String)
    case willStop(output: String)
    case didStop(output: String, finalized: Bool)
    /// An output failed (a file that cannot be written, a server gone); a push retries.
    case outputFailed(output: String, reason: String)
    case outputRecovered(output: String, attempt: Int)
    // The picture.
    case firstFrame
    /// The render-size callback: widgets re-laid at `size`.
    case resized(PixelSize)
    /// The live encoder's first frame at `size`, `latencyMs` after it was asked for.
    case resizeEncoded(PixelSize, latencyMs: Double)
    /// Frames lost since the last such event (at most one a second), and in all.
    case framesDropped(new: UInt64, total: UInt64)
    // Playback.
    case playing(media: Double)
    case paused(media: Double)
    /// Scene time moved by `by` seconds (to `media` on a finite timeline), and the music to file `track`.
    case skipped(by: Double, media: Double?, track: Int?)
    /// The music went to the next or previous file, `track`.
    case skippedTrack(track: Int, forward: Bool)
    /// `frame`: the frame a change asked for a stated moment landed on (`PATCH /v1/widgets/ID` with `at`).
    case widgetUpdated(id: String, properties: [String], source: String? = nil, frame: Int64? = nil)
    // Viewers.
    /// An RTSP viewer started playing (`viewers` in all) or a browser joined over WebRTC.
    case viewerJoined(Viewer)
    case viewerConnected(session: String)
    case viewerLeft(Viewer)
    /// The VP8 branch started for the first browser without H.264, and stopped after the last.
    case vp8Started(viewers: Int)
    case vp8Stopped
    /// A browser's picture became `picture` (nil: the main one) at a key frame of it; `size` is what it decodes now.
    case viewerSwitched(session: String, picture: PixelSize?, size: PixelSize)
    // Renditions made on demand for browsers following their windows.
    case renditionMade(size: PixelSize, session: String)
    case renditionDropped(size: PixelSize, reason: String)
    // Now playing: media players over MPRIS, and the files of --audio music.
    case playerFound(player: String)
    case playerLost(player: String)
    case playerIgnored(player: String, reason: String)
    case nowPlayingChanged(player: String, title: String, artist: String, playing: Bool)
    case trackChanged(index: Int, file: String, title: String, artist: String, album: String)
    // Video layers' inputs.
    case inputStarted(id: String, source: String)
    case inputBack(id: String, source: String, restarts: Int)
    case inputLost(id: String, source: String, reason: String, retryInSeconds: Double)
    case inputEnded(id: String, source: String)
    case inputChanged(id: String, source: String)
    case inputSizeChanged(id: String, from: PixelSize, to: PixelSize)
    // Web widgets' pages.
    /// A page was taken down (it crashed, hung, used too much memory, never loaded, navigated away) and is started
    /// again after `retryInSeconds`; the widget shows its last good frame meanwhile.
    case widgetFailed(id: String, reason: String, retryInSeconds: Double)
    /// A page that had failed shows frames again.
    case widgetRecovered(id: String, restarts: Int)
    /// A new launch of a web widget's page took the place of one that had grown by `--web-renew-growth`, without a
    /// gap: the memory the old one used and the new one uses, in MiB.
    case widgetRenewed(id: String, renewals: Int, oldMiB: Int, newMiB: Int)
    /// A page's own script failed in a call (`update`, `play`…) or reported an error; the page runs on.
    case pageError(id: String, message: String)

    /// Who joined or left.
    public enum Viewer: Sendable, Equatable {
        /// RTSP viewers playing now.
        case rtsp(viewers: Int)
        /// A browser's WebRTC session; `codec` and `sound` when it joins, `reason` when it leaves.
        case webrtc(session: String, viewers: Int, codec: String? = nil, sound: String? = nil, reason: String? = nil)
    }

    /// The event's name on the wire.
    public enum Kind: String, CaseIterable, Sendable {
        case willStart, didStart, failedToStart, willStop, didStop, outputFailed, outputRecovered
        case firstFrame, resized, resizeEncoded, framesDropped
        case playing, paused, skipped, widgetUpdated
        case viewerJoined, viewerConnected, viewerLeft, vp8Started, vp8Stopped, viewerSwitched
        case renditionMade, renditionDropped
        case playerFound, playerLost, playerIgnored, nowPlayingChanged, trackChanged
        case inputStarted, inputBack, inputLost, inputEnded, inputChanged, inputSizeChanged
        case widgetFailed, widgetRecovered, widgetRenewed, pageError
    }

    public var kind: Kind {
        switch self {
        case .willStart: .willStart
        case .didStart: .didStart
        case .failedToStart: .failedToStart
        case .willStop: .willStop
        case .didStop: .didStop
        case .outputFailed: .outputFailed
        case .outputRecovered: .outputRecovered
        case .firstFrame: .firstFrame
        case .resized: .resized
        case .resizeEncoded: .resizeEncoded
        case .framesDropped: .framesDropped
        case .playing: .playing
        case .paused: .paused
        case .skipped, .skippedTrack: .skipped
        case .widgetUpdated: .widgetUpdated
        case .viewerJoined: .viewerJoined
        case .viewerConnected: .viewerConnected
        case .viewerLeft: .viewerLeft
        case .vp8Started: .vp8Started
        case .vp8Stopped: .vp8Stopped
        case .viewerSwitched: .viewerSwitched
        case .renditionMade: .renditionMade
        case .renditionDropped: .renditionDropped
        case .playerFound: .playerFound
        case .playerLost: .playerLost
        case .playerIgnored: .playerIgnored
        case .nowPlayingChanged: .nowPlayingChanged
        case .trackChanged: .trackChanged
        case .inputStarted: .inputStarted
        case .inputBack: .inputBack
        case .inputLost: .inputLost
        case .inputEnded: .inputEnded
        case .inputChanged: .inputChanged
        case .inputSizeChanged: .inputSizeChanged
        case .widgetFailed: .widgetFailed
        case .widgetRecovered: .widgetRecovered
        case .widgetRenewed: .widgetRenewed
        case .pageError: .pageError
        }
    }

    /// The event's fields as the stream carries them (strings, as clients have always read them).
    public var details: [String: String] {
        func f(_ v: Double) -> String { String(format: "%.3f", v) }
        switch self {
        case .willStart(let o), .didStart(let o), .willStop(let o): return ["output": o]
        case .failedToStart(let o, let r), .outputFailed(let o, let r): return ["output": o, "reason": r]
        case .didStop(let o, let finalized): return ["output": o, "finalized": String(finalized)]
        case .outputRecovered(let o, let attempt): return ["output": o, "attempt": String(attempt)]
        case .firstFrame, .vp8Stopped: return [:]
        case .resized(let s): return ["width": String(s.width), "height": String(s.height)]
        case .resizeEncoded(let s, let ms):
            return ["width": String(s.width), "height": String(s.height), "latencyMs": String(format: "%.1f", ms)]
        case .framesDropped(let new, let total): return ["new": String(new), "total": String(total)]
        case .playing(let media), .paused(let media): return ["media": f(media)]
        case .skipped(let by, let media, let track):
            return ["by": f(by), "media": media.map(f) ?? "", "track": track.map(String.init) ?? ""]
        case .skippedTrack(let track, let forward): return ["track": String(track), "direction": forward ? "next" : "previous"]
        case .widgetUpdated(let id, let properties, let source, let frame):
            var d = ["id": id, "properties": properties.joined(separator: ",")]
            if let source { d["source"] = source }
            if let frame { d["frame"] = String(frame) }
            return d
        case .viewerJoined(let v), .viewerLeft(let v):
            switch v {
            case .rtsp(let n): return ["viewers": String(n)]
            case .webrtc(let session, let n, let codec, let sound, let reason):
                var d = ["kind": "webrtc", "session": session, "webrtcViewers": String(n)]
                if let codec { d["codec"] = codec }
                if let sound { d["sound"] = sound }
                if let reason { d["reason"] = reason }
                return d
            }
        case .viewerConnected(let session): return ["kind": "webrtc", "session": session]
        case .vp8Started(let n): return ["viewers": String(n)]
        case .viewerSwitched(let session, let picture, let size):
            return ["session": session, "picture": picture.map(\.description) ?? "main",
                    "width": String(size.width), "height": String(size.height)]
        case .renditionMade(let size, let session): return ["size": size.description, "session": session]
        case .renditionDropped(let size, let reason): return ["size": size.description, "reason": reason]
        case .playerFound(let p), .playerLost(let p): return ["player": p]
        case .playerIgnored(let p, let reason): return ["player": p, "reason": reason]
        case .nowPlayingChanged(let p, let title, let artist, let playing):
            return ["player": p, "title": title, "artist": artist, "playing": String(playing)]
        case .trackChanged(let index, let file, let title, let artist, let album):
            return ["index": String(index), "file": file, "title": title, "artist": artist, "album": album]
        case .inputStarted(let id, let s), .inputEnded(let id, let s), .inputChanged(let id, let s):
            return ["id": id, "source": s]
        case .inputBack(let id, let s, let restarts): return ["id": id, "source": s, "restarts": String(restarts)]
        case .inputLost(let id, let s, let reason, let retry):
            return ["id": id, "source": s, "reason": reason, "retryInSeconds": String(format: "%.0f", retry)]
        case .inputSizeChanged(let id, let from, let to): return ["id": id, "from": from.description, "to": to.description]
        case .widgetFailed(let id, let reason, let retry):
            return ["id": id, "reason": reason, "retryInSeconds": String(format: "%.0f", retry)]
        case .widgetRecovered(let id, let restarts): return ["id": id, "restarts": String(restarts)]
        case .widgetRenewed(let id, let renewals, let old, let new):
            return ["id": id, "renewals": String(renewals), "oldMiB": String(old), "newMiB": String(new)]
        case .pageError(let id, let message): return ["id": id, "message": message]
        }
    }

    /// The line the run's log shows for it, or nil for events only the stream carries.
    public var logLine: String? {
        switch self {
        case .viewerJoined(.rtsp(let n)), .viewerLeft(.rtsp(let n)): return "rtsp: \(n) viewer(s)"
        case .viewerJoined(.webrtc(let session, let n, _, _, _)): return "webrtc: \(session) joined (\(n) viewer(s))"
        case .viewerLeft(.webrtc(let session, let n, _, _, let reason)):
            return "webrtc: \(session) left: \(reason ?? "") (\(n) viewer(s))"
        case .outputFailed(let output, let reason) where output == "webrtc": return "webrtc: \(reason)"
        case .viewerSwitched(let session, let picture, let size):
            return "webrtc: \(session) sees \(picture.map { "rendition \($0)" } ?? "the main picture (\(size))")"
        case .renditionMade(let size, let session): return "rendition \(size) made for \(session)'s window"
        case .renditionDropped(let size, let reason): return "rendition \(size) dropped: \(reason)"
        case .inputStarted(let id, let s): return "video '\(id)': playing \(s)"
        case .inputLost(let id, _, let reason, let retry):
            return "video '\(id)': lost (\(reason)); retrying in \(String(format: "%.0f", retry)) s"
        case .inputBack(let id, _, _): return "video '\(id)': back"
        case .inputEnded(let id, let s): return "video '\(id)': ended \(s)"
        case .inputChanged(let id, let s): return "video '\(id)': switching to \(s)"
        case .inputSizeChanged(let id, let from, let to): return "video '\(id)': the source went from \(from) to \(to)"
        case .widgetFailed(let id, let reason, let retry):
            return "web '\(id)': \(reason); the page starts again in \(String(format: "%.0f", retry)) s"
        case .widgetRecovered(let id, _): return "web '\(id)': the page is back"
        case .widgetRenewed(let id, _, let old, let new):
            return "web '\(id)': the page grew to \(old) MiB; a new launch of it (\(new) MiB) took its place"
        case .pageError(let id, let message): return "web '\(id)': \(message)"
        default: return nil
        }
    }
}
