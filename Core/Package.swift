// swift-tools-version: 6.0
// The pure parts of pipcompose: the scene model and widget schemas, layout, the topology, timing, SDP, probe
// statistics and the control API's access rules. No GStreamer, Cairo or Pango: `swift test --package-path Core`
// builds and tests it on a machine without them, in seconds from a warm build. The main package depends on it.
import PackageDescription

let package = Package(
    name: "pipcompose-core",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "CompositorCore", targets: ["CompositorCore"]),
        // Temporary folders, child processes, polls and inline scenes: shared by every test tier, here and in Tests/.
        .library(name: "TestSupport", targets: ["TestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        .target(
            name: "CompositorCore",
            dependencies: [.product(name: "Yams", package: "Yams")]
        ),
        .target(
            name: "TestSupport",
            dependencies: ["CompositorCore"],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "CoreTests",
            dependencies: ["CompositorCore", "TestSupport"]
        ),
    ]
)
