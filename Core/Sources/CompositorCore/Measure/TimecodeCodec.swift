import Foundation

/// The machine-readable timecode strip: frame number and wall-clock time in two rows of black and white cells
/// spanning the picture's full width. See docs/TIMECODE.md for the format.
///
/// Chosen to survive what video systems do to a picture: H.264 at ordinary bitrates (cells are large, flat,
/// and only luma matters), scaling down to 320 pixels wide (57 cells a row, ≥ 5.6 px each), and any
/// brightness range (the threshold comes from the guard cells of each row).
public enum TimecodeCodec {
    /// Cells in one row: 3 guard, row id, inverted row id, 48 data, parity, 3 guard.
    public static let cellsPerRow = 57
    public static let dataBitsPerRow = 48
    static let startGuard: [Bool] = [true, false, true]
    static let endGuard: [Bool] = [true, false, true]

    /// What a strip says.
    public struct Reading: Equatable, Sendable {
        /// Frame number since the stream started (40 bits).
        public var frame: UInt64
        /// Wall-clock time the frame stands for, milliseconds since 1970 (48 bits): when it was due (a frame drawn late,
        /// caught up after a hiccup, carries when it should have been).
        public var wallMilliseconds: UInt64
        public init(frame: UInt64, wallMilliseconds: UInt64) {
            self.frame = frame & 0xFF_FFFF_FFFF
            self.wallMilliseconds = wallMilliseconds & 0xFFFF_FFFF_FFFF
        }
    }

    /// CRC-8 (polynomial 0x07) over the 11 payload bytes.
    static func crc8(_ bytes: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0
        for b in bytes {
            crc ^= b
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }

    /// 96 payload bits, most significant first: 40 frame, 48 time, 8 CRC.
    static func payload(_ r: Reading) -> [Bool] {
        var bytes: [UInt8] = []
        for i in (0..<5).reversed() { bytes.append(UInt8((r.frame >> (8 * UInt64(i))) & 0xFF)) }
        for i in (0..<6).reversed() { bytes.append(UInt8((r.wallMilliseconds >> (8 * UInt64(i))) & 0xFF)) }
        bytes.append(crc8(bytes))
        return bytes.flatMap { b in (0..<8).reversed().map { (b >> $0) & 1 == 1 } }
    }

    /// The two rows of cells; true is white.
    public static func rows(for reading: Reading) -> [[Bool]] {
        let bits = payload(reading)
        return (0..<2).map { row in
            let data = Array(bits[(row * dataBitsPerRow)..<((row + 1) * dataBitsPerRow)])
            let parity = data.filter { $0 }.count % 2 == 1
            return startGuard + [row == 1, row != 1] + data + [parity] + endGuard
        }
    }

    /// Decodes a row of cell values (luma, any range); nil unless guards, row id and parity agree.
    static func decodeRow(_ cells: [Double]) -> (row: Int, bits: [Bool])? {
        guard cells.count == cellsPerRow else { return nil }
        let whites = [cells[0], cells[2], cells[54], cells[56]]
        let blacks = [cells[1], cells[55]]
        let white = whites.min()!, black = blacks.max()!
        // Guards must show real contrast, or this scanline is not a strip.
        guard white - black >= 40 else { return nil }
        let threshold = (whites.reduce(0, +) / 4 + blacks.reduce(0, +) / 2) / 2
        let bits = cells.map { $0 > threshold }
        guard bits[0], !bits[1], bits[2], bits[54], !bits[55], bits[56] else { return nil }
        guard bits[3] != bits[4] else { return nil }
        let data = Array(bits[5..<53])
        guard (data.filter { $0 }.count % 2 == 1) == bits[53] else { return nil }
        return (bits[3] ? 1 : 0, data)
    }

    /// Reads the strip from an 8-bit luma plane (Y of I420/NV12, or any grey image).
    ///
    /// Every scanline is tried; each row id keeps the value most scanlines agree on, and the CRC decides.
    public static func read(luma: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) -> Reading? {
        guard width >= cellsPerRow, height >= 2 else { return nil }
        let cellWidth = Double(width) / Double(cellsPerRow)
        var votes: [[Bool]: Int] = [:]
        var rowOf: [[Bool]: Int] = [:]
        var cells = [Double](repeating: 0, count: cellsPerRow)
        for y in 0..<height {
            let line = y * stride
            for i in 0..<cellsPerRow {
                // Average the middle half of the cell: edges blur under scaling and compression.
                let x0 = Int(Double(i) * cellWidth + cellWidth * 0.3)
                let x1 = max(x0 + 1, Int(Double(i) * cellWidth + cellWidth * 0.7))
                var sum = 0
                for x in x0..<min(x1, width) { sum += Int(luma[line + x]) }
                cells[i] = Double(sum) / Double(max(1, min(x1, width) - x0))
            }
            if let (row, bits) = decodeRow(cells) {
                votes[bits, default: 0] += 1
                rowOf[bits] = row
            }
        }
        // A real row spans several scanlines with the same bits; a value seen on one line only is noise
        // (a one-line match of guards, id and parity happens once in 256 lines of random content).
        let minVotes = height >= 8 ? 2 : 1
        func best(_ row: Int) -> [[Bool]] {
            votes.filter { rowOf[$0.key] == row && $0.value >= minVotes }.sorted { $0.value > $1.value }.map(\.key)
        }
        // Try the likeliest pairs first; the CRC rejects wrong combinations.
        for top in best(0).prefix(3) {
            for bottom in best(1).prefix(3) {
                if let r = decodePayload(top + bottom) { return r }
            }
        }
        return nil
    }

    static func decodePayload(_ bits: [Bool]) -> Reading? {
        guard bits.count == 96 else { return nil }
        var bytes: [UInt8] = []
        for i in 0..<12 {
            var b: UInt8 = 0
            for j in 0..<8 { b = (b << 1) | (bits[i * 8 + j] ? 1 : 0) }
            bytes.append(b)
        }
        guard crc8(Array(bytes[0..<11])) == bytes[11] else { return nil }
        var frame: UInt64 = 0, ms: UInt64 = 0
        for b in bytes[0..<5] { frame = frame << 8 | UInt64(b) }
        for b in bytes[5..<11] { ms = ms << 8 | UInt64(b) }
        return Reading(frame: frame, wallMilliseconds: ms)
    }
}
