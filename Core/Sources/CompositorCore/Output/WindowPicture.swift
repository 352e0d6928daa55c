import Foundation

/// Which picture a browser window following its size gets: rules only, no state (the session applies them).
public enum WindowPicture {
    /// The largest picture made for one window, in pixels: 1920x1080, or the main picture when that is larger.
    public static func areaLimit(main: PixelSize) -> Int { max(1920 * 1080, main.width * main.height) }

    /// `size` shrunk (keeping its shape, even sides) until its area is at most `maxArea`; itself when it fits.
    public static func fitting(_ size: PixelSize, maxArea: Int) -> PixelSize {
        let area = size.width * size.height
        guard area > maxArea else { return size }
        let scale = (Double(maxArea) / Double(area)).squareRoot()
        func even(_ x: Double) -> Int { max(RenderSize.minimum.width, 2 * Int((x / 2).rounded(.down))) }
        return PixelSize(width: even(Double(size.width) * scale), height: even(Double(size.height) * scale))
    }

    /// Of `pictures`, the one nearest `size`: the least difference in width and height together, as ratios (a
    /// picture twice too wide is as far as one half as wide); on a tie, the larger (scaled down, it stays sharp).
    public static func nearest(_ size: PixelSize, among pictures: [PixelSize]) -> PixelSize? {
        func distance(_ p: PixelSize) -> Double {
            abs(log(Double(p.width) / Double(size.width))) + abs(log(Double(p.height) / Double(size.height)))
        }
        return pictures.min { a, b in
            let (da, db) = (distance(a), distance(b))
            if abs(da - db) > 1e-9 { return da < db }
            return a.width * a.height > b.width * b.height
        }
    }
}
