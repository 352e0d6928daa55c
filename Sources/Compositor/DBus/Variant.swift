import CGio

/// One owned `GVariant`: a D-Bus value read with GLib's non-variadic accessors.
///
/// `@unchecked Sendable`: a GVariant is immutable once made and its reference count is atomic.
public final class Variant: @unchecked Sendable {
    let raw: OpaquePointer

    /// Takes ownership of a reference; a floating one (fresh from `g_variant_new_*`) is sunk.
    init(taking raw: OpaquePointer) {
        self.raw = g_variant_is_floating(raw) != 0 ? g_variant_ref_sink(raw) : raw
    }

    deinit { g_variant_unref(raw) }

    /// The D-Bus signature of this value, e.g. `s`, `as`, `a{sv}`.
    public var type: String { String(cString: g_variant_get_type_string(raw)) }

    public static func string(_ s: String) -> Variant { Variant(taking: g_variant_new_string(s)) }

    public static func tuple(_ items: [Variant]) -> Variant {
        var children: [OpaquePointer?] = items.map { $0.raw }
        return Variant(taking: g_variant_new_tuple(&children, gsize(children.count)))
    }

    public var count: Int { type.hasPrefix("a") || type.hasPrefix("(") ? Int(g_variant_n_children(raw)) : 0 }

    public func child(_ i: Int) -> Variant? {
        guard i < count else { return nil }
        return Variant(taking: g_variant_get_child_value(raw, gsize(i)))
    }

    /// The value under `key` in an `a{sv}` dictionary, unboxed.
    public func lookup(_ key: String) -> Variant? {
        guard type == "a{sv}", let v = g_variant_lookup_value(raw, key, nil) else { return nil }
        return Variant(taking: v)
    }

    /// A `v` unboxed; any other value as it is.
    public var unboxed: Variant { type == "v" ? Variant(taking: g_variant_get_variant(raw)) : self }

    public var string: String? {
        let t = unboxed
        guard ["s", "o", "g"].contains(t.type) else { return nil }
        return String(cString: g_variant_get_string(t.raw, nil))
    }

    /// A string list (`as`); a single string as a list of one.
    public var strings: [String]? {
        let t = unboxed
        if let s = t.string { return [s] }
        guard t.type == "as" else { return nil }
        return (0..<t.count).compactMap { t.child($0)?.string }
    }

    /// Any integer type, as MPRIS players disagree on `x` and `t` for lengths and positions.
    public var integer: Int64? {
        let t = unboxed
        switch t.type {
        case "x": return Int64(g_variant_get_int64(t.raw))
        case "t": return Int64(clamping: g_variant_get_uint64(t.raw))
        case "i": return Int64(g_variant_get_int32(t.raw))
        case "u": return Int64(g_variant_get_uint32(t.raw))
        case "d": return Int64(exactly: g_variant_get_double(t.raw).rounded(.towardZero))
        default: return nil
        }
    }
}
