import Foundation

/// A straight (not premultiplied) RGBA colour, components 0...1.
public struct Color: Equatable, Sendable, CustomStringConvertible {
    public var red: Double
    public var green: Double
    public var blue: Double
    public var alpha: Double

    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    public static let black = Color(red: 0, green: 0, blue: 0)
    public static let white = Color(red: 1, green: 1, blue: 1)
    public static let clear = Color(red: 0, green: 0, blue: 0, alpha: 0)

    public func withAlpha(_ a: Double) -> Color { Color(red: red, green: green, blue: blue, alpha: a) }

    public var description: String {
        func h(_ v: Double) -> String { String(format: "%02x", Int((v * 255).rounded())) }
        return "#" + h(red) + h(green) + h(blue) + (alpha < 1 ? h(alpha) : "")
    }

    /// Named colours accepted in scene files besides hex notation.
    public static let named: [String: Color] = [
        "black": .black, "white": .white, "transparent": .clear,
        "red": Color(red: 0.9, green: 0.2, blue: 0.2), "green": Color(red: 0.2, green: 0.75, blue: 0.3),
        "blue": Color(red: 0.2, green: 0.45, blue: 0.95), "yellow": Color(red: 0.98, green: 0.85, blue: 0.2),
        "orange": Color(red: 0.98, green: 0.6, blue: 0.15), "gray": Color(red: 0.5, green: 0.5, blue: 0.5),
        "grey": Color(red: 0.5, green: 0.5, blue: 0.5),
    ]

    /// The accepted forms, for error messages.
    public static let syntaxHelp = "#rgb, #rrggbb, #rrggbbaa or a name (\(named.keys.sorted().joined(separator: ", ")))"

    /// Parses `#rgb`, `#rrggbb`, `#rrggbbaa` or a name; nil when it is none of these.
    public init?(parsing text: String) {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let c = Color.named[t] {
            self = c
            return
        }
        guard t.hasPrefix("#") else { return nil }
        let hex = Array(t.dropFirst())
        guard hex.allSatisfy({ $0.isHexDigit }) else { return nil }
        func v(_ s: ArraySlice<Character>) -> Double { Double(Int(String(s), radix: 16)!) }
        switch hex.count {
        case 3:
            self.init(red: v(hex[0...0]) / 15, green: v(hex[1...1]) / 15, blue: v(hex[2...2]) / 15)
        case 6, 8:
            self.init(red: v(hex[0...1]) / 255, green: v(hex[2...3]) / 255, blue: v(hex[4...5]) / 255,
                      alpha: hex.count == 8 ? v(hex[6...7]) / 255 : 1)
        default:
            return nil
        }
    }
}
