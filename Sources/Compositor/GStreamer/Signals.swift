import CGst

/// Connects Swift closures to GObject signals: the closure lives in a retained box passed as user data and
/// released by the destroy notify; the C trampoline is `@convention(c)`.
final class SignalBox {
    let handler: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void
    init(_ handler: @escaping (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void) { self.handler = handler }
}

final class IndexedTextSignalBox {
    let handler: (UInt32, String) -> Void
    init(_ handler: @escaping (UInt32, String) -> Void) { self.handler = handler }
}

final class IntegerSignalBox {
    let handler: (Int32) -> Void
    init(_ handler: @escaping (Int32) -> Void) { self.handler = handler }
}

enum Signals {
    /// For signals of the shape `void (*)(Instance *self, gpointer user_data)`: the trampoline must take
    /// exactly the signal's arguments, or user data is read from the wrong register.
    @discardableResult
    static func connect(_ instance: UnsafeMutableRawPointer, _ name: String, noArguments handler: @escaping () -> Void) -> gulong {
        let box = Unmanaged.passRetained(SignalBox({ _, _ in handler() })).toOpaque()
        let trampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
            Unmanaged<SignalBox>.fromOpaque(data!).takeUnretainedValue().handler(nil, nil)
        }
        let destroy: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            Unmanaged<SignalBox>.fromOpaque(data!).release()
        }
        return g_signal_connect_data(instance, name, unsafeBitCast(trampoline, to: GCallback.self), box, destroy,
                                     GConnectFlags(rawValue: 0))
    }

    /// For signals of the shape `void (*)(Instance *self, Arg *arg, gpointer user_data)`.
    @discardableResult
    static func connect(_ instance: UnsafeMutableRawPointer, _ name: String,
                        _ handler: @escaping (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void) -> gulong {
        let box = Unmanaged.passRetained(SignalBox(handler)).toOpaque()
        let trampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
            instance, arg, data in
            Unmanaged<SignalBox>.fromOpaque(data!).takeUnretainedValue().handler(instance, arg)
        }
        let destroy: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            Unmanaged<SignalBox>.fromOpaque(data!).release()
        }
        return g_signal_connect_data(instance, name, unsafeBitCast(trampoline, to: GCallback.self), box, destroy,
                                     GConnectFlags(rawValue: 0))
    }

    /// For signals of the shape `void (*)(Instance *self, gint value, gpointer user_data)` (a media's `new-state`).
    @discardableResult
    static func connect(_ instance: UnsafeMutableRawPointer, _ name: String,
                        integer handler: @escaping (Int32) -> Void) -> gulong {
        let box = Unmanaged.passRetained(IntegerSignalBox(handler)).toOpaque()
        let trampoline: @convention(c) (UnsafeMutableRawPointer?, gint, UnsafeMutableRawPointer?) -> Void = { _, value, data in
            Unmanaged<IntegerSignalBox>.fromOpaque(data!).takeUnretainedValue().handler(value)
        }
        let destroy: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            Unmanaged<IntegerSignalBox>.fromOpaque(data!).release()
        }
        return g_signal_connect_data(instance, name, unsafeBitCast(trampoline, to: GCallback.self), box, destroy,
                                     GConnectFlags(rawValue: 0))
    }

    /// For signals of the shape `void (*)(Instance *self, guint index, gchar *text, gpointer user_data)` (webrtcbin's
    /// `on-ice-candidate`: the media section and the candidate).
    @discardableResult
    static func connectIndexedText(_ instance: UnsafeMutableRawPointer, _ name: String,
                                   _ handler: @escaping (UInt32, String) -> Void) -> gulong {
        let box = Unmanaged.passRetained(IndexedTextSignalBox(handler)).toOpaque()
        let trampoline: @convention(c) (UnsafeMutableRawPointer?, guint, UnsafePointer<gchar>?, UnsafeMutableRawPointer?) -> Void = {
            _, index, text, data in
            Unmanaged<IndexedTextSignalBox>.fromOpaque(data!).takeUnretainedValue().handler(index, text.map { String(cString: $0) } ?? "")
        }
        let destroy: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            Unmanaged<IndexedTextSignalBox>.fromOpaque(data!).release()
        }
        return g_signal_connect_data(instance, name, unsafeBitCast(trampoline, to: GCallback.self), box, destroy,
                                     GConnectFlags(rawValue: 0))
    }

    /// For signals of the shape `void (*)(Instance *self, guint a, guint b, gpointer user_data)` (rtpbin's
    /// `on-timeout`: session and SSRC), when the arguments do not matter.
    @discardableResult
    static func connect(_ instance: UnsafeMutableRawPointer, _ name: String,
                        twoIntegers handler: @escaping () -> Void) -> gulong {
        let box = Unmanaged.passRetained(SignalBox({ _, _ in handler() })).toOpaque()
        let trampoline: @convention(c) (UnsafeMutableRawPointer?, guint, guint, UnsafeMutableRawPointer?) -> Void = {
            _, _, _, data in
            Unmanaged<SignalBox>.fromOpaque(data!).takeUnretainedValue().handler(nil, nil)
        }
        let destroy: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            Unmanaged<SignalBox>.fromOpaque(data!).release()
        }
        return g_signal_connect_data(instance, name, unsafeBitCast(trampoline, to: GCallback.self), box, destroy,
                                     GConnectFlags(rawValue: 0))
    }

    /// For signals of the shape `void (*)(Instance *self, Object *object, guint a, guint b, gpointer user_data)`
    /// (rtpbin's `new-jitterbuffer`: the jitterbuffer, its session and SSRC), when only the object matters.
    @discardableResult
    static func connect(_ instance: UnsafeMutableRawPointer, _ name: String,
                        objectAndTwoIntegers handler: @escaping (UnsafeMutableRawPointer?) -> Void) -> gulong {
        let box = Unmanaged.passRetained(SignalBox({ object, _ in handler(object) })).toOpaque()
        let trampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, guint, guint,
                                        UnsafeMutableRawPointer?) -> Void = { _, object, _, _, data in
            Unmanaged<SignalBox>.fromOpaque(data!).takeUnretainedValue().handler(object, nil)
        }
        let destroy: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
            Unmanaged<SignalBox>.fromOpaque(data!).release()
        }
        return g_signal_connect_data(instance, name, unsafeBitCast(trampoline, to: GCallback.self), box, destroy,
                                     GConnectFlags(rawValue: 0))
    }
}
