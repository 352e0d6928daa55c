import CGst

/// A media factory whose every request on its mount shares one media.
///
/// gst-rtsp-server's default key for a shared media is the request URL's port, path and query: a viewer that
/// comes through a relay, a port-forward or NAT on another port, or that asks for `/pip/stream=99`, would get a
/// media of its own. Here the key is constant, so a request for an unknown stream finds the live media, fails
/// alone with 404, and changes nothing for anyone else.
enum SharedMediaFactory {
    /// Registered once per process: a subclass of GstRTSPMediaFactory whose `gen_key` ignores the URL.
    private static let type: GType = {
        let classInit: @convention(c) (gpointer?, gpointer?) -> Void = { klass, _ in
            let factoryClass = klass!.assumingMemoryBound(to: GstRTSPMediaFactoryClass.self)
            factoryClass.pointee.gen_key = { _, _ in g_strdup("live") }
        }
        return g_type_register_static_simple(gst_rtsp_media_factory_get_type(), "PipcomposeSharedMediaFactory",
                                             guint(MemoryLayout<GstRTSPMediaFactoryClass>.size), classInit,
                                             guint(MemoryLayout<GstRTSPMediaFactory>.size), nil, GTypeFlags(rawValue: 0))
    }()

    /// A new factory (transfer full), shared, serving `launch`.
    static func make(launch: String) -> UnsafeMutablePointer<GstRTSPMediaFactory> {
        let object = g_object_new_with_properties(type, 0, nil, nil)!
        let factory = UnsafeMutableRawPointer(object).assumingMemoryBound(to: GstRTSPMediaFactory.self)
        gst_rtsp_media_factory_set_launch(factory, launch)
        gst_rtsp_media_factory_set_shared(factory, 1)
        return factory
    }
}
