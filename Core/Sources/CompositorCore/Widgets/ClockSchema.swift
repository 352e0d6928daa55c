import Foundation

/// The clock: the time (and a date line) in a time zone, re-laid for its box.
public struct ClockConfig: WidgetConfig, Equatable {
    /// ICU date pattern, e.g. "HH:mm:ss" or "h:mm a".
    public var format = Keys.format.fallback
    /// IANA zone name, e.g. "Asia/Tokyo"; nil is the machine's zone.
    public var timezone: String? = nil
    /// ICU pattern of a second line, e.g. "EEEE d MMMM"; nil for none.
    public var dateFormat: String? = nil
    /// Locale for month and day names, e.g. "ja_JP".
    public var locale = Keys.locale.fallback

    public enum Keys {
        static let format = WidgetKey.text("format", default: "HH:mm:ss", nonEmpty: true,
                                           doc: "ICU pattern of the time, e.g. HH:mm:ss or h:mm a")
        static let timezone = WidgetKey.text("timezone", default: "", shown: "the machine's", doc:
            "an IANA time zone the system knows, e.g. Asia/Tokyo", live: true, check: { zone in
                TimeZone(identifier: zone) == nil
                    ? "unknown timezone '\(zone)'; expected an IANA name such as Europe/Paris or Asia/Tokyo" : nil
            })
        static let date = WidgetKey.text("date", default: "", shown: "none", nonEmpty: true,
                                         doc: "ICU pattern of a date line under the time, e.g. EEEE d MMMM")
        static let locale = WidgetKey.text("locale", default: "en_US_POSIX", doc: "locale of month and day names, e.g. ja_JP")
    }

    public static let type = "clock"
    public static let summary = "the time, and a date line, in any time zone"
    public static let keys = [Keys.format.info, Keys.timezone.info, Keys.date.info, Keys.locale.info]
    public static let placement = Placement(edge: .top, size: 0.18, minPixels: 14, priority: 3)

    public init() {}

    public init(scene f: SceneFields) throws(SceneError) {
        format = try f.read(Keys.format)
        timezone = try f.value(Keys.timezone)
        dateFormat = try f.value(Keys.date)
        locale = try f.read(Keys.locale)
    }

    /// A new time zone.
    public struct Change: WidgetChange {
        public let timezone: String
    }

    public static func change(_ f: LiveFields) throws(ControlError) -> any WidgetChange {
        Change(timezone: try f.require(Keys.timezone))
    }
}
