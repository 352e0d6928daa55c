import Testing
@testable import Compositor

@Suite struct AllocatorSettingsTests {
    /// A run asks GLib for slices from malloc unless the user already said how slices are made, even with an empty
    /// value: theirs is kept.
    @Test func slicesFromMallocUnlessTheUserChose() {
        #expect(AllocatorSettings.additions(to: ["PATH": "/usr/bin"])["G_SLICE"] == "always-malloc")
        #expect(AllocatorSettings.additions(to: ["G_SLICE": "debug-blocks"])["G_SLICE"] == nil)
        #expect(AllocatorSettings.additions(to: ["G_SLICE": ""])["G_SLICE"] == nil)
        #expect(AllocatorSettings.additions(to: ["G_SLICE": "always-malloc"])["G_SLICE"] == nil)
    }

    /// glibc's per-thread caches are turned off unless the user set their size; tunables the user set for other
    /// things are kept beside it.
    @Test func glibcsThreadCachesOffUnlessTheUserChose() {
        let off = "glibc.malloc.tcache_count=0"
        #expect(AllocatorSettings.additions(to: [:])["GLIBC_TUNABLES"] == off)
        #expect(AllocatorSettings.additions(to: ["GLIBC_TUNABLES": ""])["GLIBC_TUNABLES"] == off)
        #expect(AllocatorSettings.additions(to: ["GLIBC_TUNABLES": "glibc.malloc.arena_max=4"])["GLIBC_TUNABLES"]
                == "glibc.malloc.arena_max=4:" + off)
        #expect(AllocatorSettings.additions(to: ["GLIBC_TUNABLES": "glibc.malloc.tcache_count=7"])["GLIBC_TUNABLES"] == nil)
        let both = ["GLIBC_TUNABLES": "glibc.malloc.arena_max=4:glibc.malloc.tcache_count=3"]
        #expect(AllocatorSettings.additions(to: both)["GLIBC_TUNABLES"] == nil)
        // Both set as a restart leaves them: nothing to add, so a run starts over only once.
        #expect(AllocatorSettings.additions(to: ["G_SLICE": "always-malloc", "GLIBC_TUNABLES": off]).isEmpty)
    }
}
