import Foundation

/// GLib's slice allocator (`g_slice_new`, which GStreamer 1.22 uses for its buffers, memories, events, queries,
/// structures and many of its objects). Up to GLib 2.74, Debian 12's, it keeps pages of equal-sized chunks and a cache
/// of free chunks per thread, and gives a page back only when every chunk on it is free: what a burst allocates (an
/// encoder behind, a queue filling to its limit, a resize, a viewer joining) stays held as long as one chunk on each
/// of its pages lives on, and a long run keeps every new high-water mark of any of those (the hour with everything on
/// sat 3–4 MiB lower with slices from malloc, docs/BENCHMARKS.md). GLib 2.76 and later take every slice from malloc;
/// `G_SLICE=always-malloc` does the same on 2.74.
///
/// GLib reads that variable once, when it is loaded (its own constructor makes the first slice, before `main`), so a
/// process can only have it by starting over with it set: `restartTakingSlicesFromMalloc` does that, once.
public enum SliceAllocator {
    /// The variables to add to `environment` so that GLib takes slices from malloc: none when the user set
    /// `G_SLICE` (even empty: their choice, kept as it is).
    public static func additions(to environment: [String: String]) -> [String: String] {
        environment["G_SLICE"] == nil ? ["G_SLICE": "always-malloc"] : [:]
    }

    /// Replaces this process's image with itself, the same arguments and process id, `G_SLICE=always-malloc` added,
    /// unless the environment already says how slices are made (then, or if the image cannot be started again, it
    /// returns and the run goes on as it is). Call first thing, before any thread or file of the run: nothing made
    /// before it survives. Children inherit the setting (the web pages' processes are GLib's too).
    public static func restartTakingSlicesFromMalloc() {
        let add = additions(to: ProcessInfo.processInfo.environment)
        // The binary's own path, not /proc/self/exe: the process's name (ps, pgrep, top) is the started file's.
        guard !add.isEmpty, let binary = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        else { return }
        for (name, value) in add { setenv(name, value, 1) }
        execv(binary, CommandLine.unsafeArgv)
        // Not restarted (the binary replaced on disk since it started): slices from GLib's own pages, as before.
        for name in add.keys { unsetenv(name) }
    }
}
