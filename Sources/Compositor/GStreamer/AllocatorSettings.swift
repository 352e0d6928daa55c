import Foundation

/// How a run's allocators are set, where only the environment the process starts with can set them.
///
/// GLib's slice allocator (`g_slice_new`, which GStreamer 1.22 uses for its buffers, memories, events, queries,
/// structures and many of its objects): up to GLib 2.74, Debian 12's, it keeps pages of equal-sized chunks and a cache
/// of free chunks per thread, and gives a page back only when every chunk on it is free: what a burst allocates (an
/// encoder behind, a queue filling to its limit, a resize, a viewer joining) stays held as long as one chunk on each
/// of its pages lives on, and a long run keeps every new high-water mark of any of those (the hour with everything on
/// sat 3–4 MiB lower with slices from malloc, docs/BENCHMARKS.md). GLib 2.76 and later take every slice from malloc;
/// `G_SLICE=always-malloc` does the same on 2.74. GLib reads it once, when it is loaded (its own constructor makes the
/// first slice, before `main`).
///
/// glibc's per-thread caches of freed blocks (tcache: up to 7 blocks of each of 64 sizes in every thread): a run has
/// about 70 threads, and what each keeps is held for good and pins the pages it sits on. Off
/// (`GLIBC_TUNABLES=glibc.malloc.tcache_count=0`), the hour with everything on held about 3 MiB fewer blocks in the
/// heaps and rose half as much at its first return to a size, at the same CPU (docs/BENCHMARKS.md). glibc reads it
/// as the process starts.
///
/// So a process can only have them by starting over with them set: `restartWithThem` does that, once.
public enum AllocatorSettings {
    static let tcacheOff = "glibc.malloc.tcache_count=0"

    /// The variables to set in `environment` (with their whole new values): none that the user already chose.
    /// `G_SLICE` set at all (even empty) is theirs; `GLIBC_TUNABLES` that names `glibc.malloc.tcache_count` is theirs,
    /// and one that names other tunables keeps them, the cache's added.
    public static func additions(to environment: [String: String]) -> [String: String] {
        var add: [String: String] = [:]
        if environment["G_SLICE"] == nil { add["G_SLICE"] = "always-malloc" }
        switch environment["GLIBC_TUNABLES"] {
        case nil, "": add["GLIBC_TUNABLES"] = tcacheOff
        case let given? where !given.split(separator: ":").contains(where: { $0.hasPrefix("glibc.malloc.tcache_count=") }):
            add["GLIBC_TUNABLES"] = given + ":" + tcacheOff
        default: break
        }
        return add
    }

    /// Replaces this process's image with itself, the same arguments and process id, the `additions` set, unless
    /// there are none (then, or if the image cannot be started again, it returns and the run goes on as it is). Call
    /// first thing, before any thread or file of the run: nothing made before it survives. Children inherit the
    /// settings (the web pages' processes are GLib's too).
    public static func restartWithThem() {
        let environment = ProcessInfo.processInfo.environment
        let add = additions(to: environment)
        // The binary's own path, not /proc/self/exe: the process's name (ps, pgrep, top) is the started file's.
        guard !add.isEmpty, let binary = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        else { return }
        for (name, value) in add { setenv(name, value, 1) }
        execv(binary, CommandLine.unsafeArgv)
        // Not restarted (the binary replaced on disk since it started): the allocators as they were.
        for name in add.keys {
            if let old = environment[name] { setenv(name, old, 1) } else { unsetenv(name) }
        }
    }
}
