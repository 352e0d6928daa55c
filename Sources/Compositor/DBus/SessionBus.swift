import CGio
import Foundation

/// A connection to the D-Bus session bus (GIO's GDBus), used to call methods synchronously from any thread.
///
/// `@unchecked Sendable`: a GDBusConnection is thread-safe (GIO documents synchronous calls from any thread).
public final class SessionBus: @unchecked Sendable {
    private let connection: OpaquePointer
    public let address: String

    /// Connects when a session bus is there: `DBUS_SESSION_BUS_ADDRESS` is set or `$XDG_RUNTIME_DIR/bus`
    /// exists. Never autolaunches a bus.
    public static func connectIfPresent() throws(GstError) -> SessionBus? {
        let env = ProcessInfo.processInfo.environment
        var address = env["DBUS_SESSION_BUS_ADDRESS"] ?? ""
        if address.isEmpty, let dir = env["XDG_RUNTIME_DIR"], FileManager.default.fileExists(atPath: dir + "/bus") {
            address = "unix:path=\(dir)/bus"
        }
        guard !address.isEmpty else { return nil }
        return try SessionBus(address: address)
    }

    public init(address: String) throws(GstError) {
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                                         | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let c = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            throw GstError.take(error, element: "d-bus", fallback: "cannot connect to the session bus at \(address)")
        }
        connection = c
        self.address = address
    }

    deinit {
        g_dbus_connection_close_sync(connection, nil, nil)
        g_object_unref(UnsafeMutableRawPointer(connection))
    }

    /// Calls `interface.method` on `object` of the bus name `destination` and returns the reply tuple.
    public func call(_ destination: String, _ object: String, _ interface: String, _ method: String,
                     _ arguments: [Variant] = [], timeoutMilliseconds: Int32 = 1000) throws(GstError) -> Variant {
        var error: UnsafeMutablePointer<GError>?
        let args = arguments.isEmpty ? nil : Variant.tuple(arguments)
        let reply = withExtendedLifetime(args) {
            g_dbus_connection_call_sync(connection, destination, object, interface, method, args?.raw, nil,
                                        G_DBUS_CALL_FLAGS_NO_AUTO_START, timeoutMilliseconds, nil, &error)
        }
        guard let reply else {
            throw GstError.take(error, element: "d-bus", fallback: "\(interface).\(method) on \(destination) failed")
        }
        return Variant(taking: reply)
    }

    /// Names on the bus now.
    public func names() throws(GstError) -> [String] {
        try call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListNames")
            .child(0)?.strings ?? []
    }
}
