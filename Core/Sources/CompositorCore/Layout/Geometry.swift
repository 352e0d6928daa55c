/// A rectangle in pixels, origin top-left, as Cairo draws.
public struct Rect: Equatable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public static let zero = Rect(x: 0, y: 0, width: 0, height: 0)

    public var minX: Double { x }
    public var minY: Double { y }
    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var description: String { "(\(fmt(x)),\(fmt(y)) \(fmt(width))x\(fmt(height)))" }

    /// Shrinks every side by `d` (never below zero size).
    public func inset(_ d: Double) -> Rect {
        inset(dx: d, dy: d)
    }

    public func inset(dx: Double, dy: Double) -> Rect {
        let w = max(0, width - 2 * dx)
        let h = max(0, height - 2 * dy)
        return Rect(x: x + min(dx, width / 2), y: y + min(dy, height / 2), width: w, height: h)
    }

    /// True when the two rectangles share area (touching edges do not count).
    public func intersects(_ other: Rect, tolerance: Double = 1e-6) -> Bool {
        minX < other.maxX - tolerance && other.minX < maxX - tolerance
            && minY < other.maxY - tolerance && other.minY < maxY - tolerance
    }

    /// True when `other` lies inside this rectangle, allowing `tolerance` pixels of slack.
    public func contains(_ other: Rect, tolerance: Double = 0.5) -> Bool {
        other.minX >= minX - tolerance && other.minY >= minY - tolerance
            && other.maxX <= maxX + tolerance && other.maxY <= maxY + tolerance
    }

    /// The area both share, nil when they do not overlap.
    public func intersection(_ other: Rect) -> Rect? {
        let x0 = Swift.max(minX, other.minX), y0 = Swift.max(minY, other.minY)
        let x1 = Swift.min(maxX, other.maxX), y1 = Swift.min(maxY, other.maxY)
        return x1 > x0 && y1 > y0 ? Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0) : nil
    }

    public func union(_ other: Rect) -> Rect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let x0 = Swift.min(minX, other.minX), y0 = Swift.min(minY, other.minY)
        let x1 = Swift.max(maxX, other.maxX), y1 = Swift.max(maxY, other.maxY)
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// The smallest rectangle on whole pixels that covers this one.
    public var integral: Rect {
        let x0 = (minX).rounded(.down), y0 = (minY).rounded(.down)
        let x1 = (maxX).rounded(.up), y1 = (maxY).rounded(.up)
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    private func fmt(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(format: "%.1f", v)
    }
}

/// The size of the picture in whole pixels.
public struct PixelSize: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }
    public var isPortrait: Bool { height > width }
    public var rect: Rect { Rect(x: 0, y: 0, width: Double(width), height: Double(height)) }
    /// The shorter side, which sets the scale of type and spacing.
    public var shortSide: Int { min(width, height) }
}
