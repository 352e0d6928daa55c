// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "pipcompose",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "pipcompose", targets: ["pipcompose"]),
        .library(name: "Compositor", targets: ["Compositor"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The pure parts (Core/Package.swift): scene model and widget schemas, layout, topology, access rules.
        .package(path: "Core"),
    ],
    targets: [
        // GStreamer core, app, video, pbutils (discovering audio files) and rtsp-server; shims for macros and varargs only.
        .systemLibrary(
            name: "CGst",
            pkgConfig: "gstreamer-rtsp-server-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev", "libgstrtspserver-1.0-dev"])]
        ),
        // Cairo and Pango (with its Cairo backend), the drawing and text stack.
        .systemLibrary(
            name: "CPango",
            pkgConfig: "pangocairo",
            providers: [.apt(["libpango1.0-dev", "libcairo2-dev"])]
        ),
        // librsvg for SVG and gdk-pixbuf for PNG/JPEG decoding into Cairo surfaces.
        .systemLibrary(
            name: "CRsvg",
            pkgConfig: "librsvg-2.0",
            providers: [.apt(["librsvg2-dev", "libgdk-pixbuf-2.0-dev"])]
        ),
        // GIO's D-Bus client (now-playing from MPRIS players).
        .systemLibrary(
            name: "CGio",
            pkgConfig: "gio-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        // Pixel kernels (BGRx -> I420) in C: AVX2 chosen at run time, and optimized even in a debug build.
        .target(
            name: "CKernels",
            cSettings: [.unsafeFlags(["-O2"])]
        ),
        // Process and thread calls Swift's Glibc module does not offer: a child in a session of its own, pipe2,
        // thread names.
        .target(name: "CProcess"),
        // WebKit's view inside wpevideosrc (its size and address) and the count of frames wpesrc takes from it. GLib's
        // headers come with CGst (SwiftPM passes a system library's pkg-config flags to the targets that depend on it).
        .target(
            name: "CWpeView",
            dependencies: ["CGst"]
        ),
        .target(
            name: "Compositor",
            dependencies: [
                .product(name: "CompositorCore", package: "Core"),
                "CGst", "CPango", "CRsvg", "CKernels", "CProcess", "CWpeView", "CGio",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "pipcompose",
            dependencies: [
                "Compositor",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // A web page's process counts the frames wpesrc takes from WebKit (Sources/CWpeView/wpe_frames.c): the
            // plugin's call binds to the executable's function only when the executable exports it.
            linkerSettings: [.unsafeFlags([
                "-Xlinker", "--export-dynamic-symbol=wpe_view_backend_exportable_fdo_dispatch_frame_complete",
            ])]
        ),
        .executableTarget(
            name: "RenderBench",
            dependencies: ["Compositor"],
            path: "bench/RenderBench"
        ),
        .testTarget(
            name: "UnitTests",
            dependencies: ["Compositor", "CKernels", "CPango", .product(name: "TestSupport", package: "Core")]
        ),
        .testTarget(
            name: "PipelineTests",
            dependencies: ["Compositor", .product(name: "TestSupport", package: "Core"), .product(name: "HummingbirdTesting", package: "hummingbird"),
                           .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        // Runs the built `pipcompose` binary as a user would.
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["pipcompose", "Compositor", .product(name: "TestSupport", package: "Core")]
        ),
    ]
)
