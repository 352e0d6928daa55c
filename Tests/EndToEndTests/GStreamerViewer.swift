import Foundation

/// What a gst-launch viewer got before its stream ended.
struct GStreamerViewing {
    /// The pipeline's EOS came (the stream ended where the pipeline said: `identity eos-after=N` after N-1 buffers).
    let ended: Bool
    /// The first "ERROR" line printed before that EOS, if any.
    let errorBeforeEnd: String?
    /// Everything gst-launch printed, stdout and stderr in the order printed.
    let output: String

    /// Every buffer the pipeline asked for, and no error on the way.
    var played: Bool { ended && errorBeforeEnd == nil }
}

/// Runs `gst-launch-1.0` with `elements` (a pipeline that ends itself, e.g. with `identity eos-after=N`) and judges it
/// by what it printed up to the pipeline's EOS, not by its exit status.
///
/// Why not the exit status: when gst-launch stops the pipeline after EOS, rtspsrc 1.22 goes PLAYING to PAUSED (its
/// thread sends PAUSE) and at once PAUSED to READY (the CLOSE command flushes the connection). When the flush lands
/// before the PAUSE's write, the write fails with nothing written and rtspsrc posts "Could not send message.
/// (Received end-of-file)": exit 1, though every frame had played and the server never saw the PAUSE. Plain
/// gst-rtsp-server gets the same from this client: 5 runs in 40 beside a busy pipcompose (BENCHMARKS-LOG,
/// 2026-11-29, with rtspsrc's debug log of the race).
func gstLaunchViewer(_ elements: [String], timeout: TimeInterval = 90) throws -> GStreamerViewing {
    // One ordered stream (g_print and g_printerr flush each line), so an error before EOS can be told from one
    // after it. The arguments go to gst-launch as they are: no shell quoting of URLs with logins in them.
    let p = try LiveProcess("/bin/sh", ["-c", "exec gst-launch-1.0 \"$@\" 2>&1", "gst-launch-1.0"] + elements)
    if p.waitForExit(timeout: timeout) == nil {
        p.signal(SIGKILL)
        _ = p.waitForExit(timeout: 10)
    }
    let lines = p.stdout
    let beforeEnd = lines.prefix { !$0.hasPrefix("Got EOS from element") }
    return GStreamerViewing(ended: beforeEnd.count < lines.count,
                            errorBeforeEnd: beforeEnd.first { $0.contains("ERROR") },
                            output: p.allOutput)
}
