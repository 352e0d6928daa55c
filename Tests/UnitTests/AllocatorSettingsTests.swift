import Testing
@testable import Compositor

@Suite struct SliceAllocatorTests {
    /// A run asks GLib for slices from malloc unless the user already said how slices are made, even with an empty
    /// value: theirs is kept.
    @Test func slicesFromMallocUnlessTheUserChose() {
        #expect(SliceAllocator.additions(to: ["PATH": "/usr/bin"]) == ["G_SLICE": "always-malloc"])
        #expect(SliceAllocator.additions(to: ["G_SLICE": "debug-blocks"]).isEmpty)
        #expect(SliceAllocator.additions(to: ["G_SLICE": ""]).isEmpty)
        #expect(SliceAllocator.additions(to: ["G_SLICE": "always-malloc"]).isEmpty)
    }
}
