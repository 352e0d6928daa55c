/// Luma (BT.709, full range) of a BGRx/BGRA surface, as an 8-bit plane: what the timecode reader reads from
/// frames that never went through an encoder (snapshots, tests).
public enum Luma {
    public static func plane(of surface: ImageSurface) -> [UInt8] {
        surface.withBytes { buf in
            var out = [UInt8](repeating: 0, count: surface.width * surface.height)
            for y in 0..<surface.height {
                let row = y * surface.stride
                for x in 0..<surface.width {
                    let b = Double(buf[row + x * 4]), g = Double(buf[row + x * 4 + 1]), r = Double(buf[row + x * 4 + 2])
                    out[y * surface.width + x] = UInt8(min(255, (0.2126 * r + 0.7152 * g + 0.0722 * b).rounded()))
                }
            }
            return out
        }
    }
}
