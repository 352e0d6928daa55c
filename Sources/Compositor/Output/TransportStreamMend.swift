import Foundation

/// Mends an MPEG-TS recording that stopped in the middle of a write (a full disk), as `FragmentMend` does for MP4.
///
/// A transport stream is packets of 188 bytes, and each frame (a PES packet) is spread over packets of its stream's
/// PID. When the disk fills, the file ends part way through a packet and through the frame being written: players
/// read on to the cut, but ffmpeg reports the broken frame ("Packet corrupt", "error while decoding"). Mended, the file
/// ends on a packet's boundary before the first frame not known to be whole, and nothing else is touched.
///
/// A PES packet that gives its length is whole when that many bytes are there. One over 64 KB (a key frame at 720p
/// and above) cannot give it (length 0: it runs to the next one), so it is known to be whole only when the next frame
/// of its PID starts: as the file's last frame it is dropped, even when it was written whole.
enum TransportStreamMend {
    static let packetSize = 188
    /// How much of the file's end is read. The frames a cut breaks lie in its last few hundred kilobytes; a file whose
    /// broken frame starts before this is left as it is.
    static let window = 16 << 20

    /// Mends the MPEG-TS file at `path`. Nil when the file cannot be read or written, or is not a transport stream
    /// from its first packet to the cut (a sync byte missing): such a file is left as it is.
    @discardableResult
    static func mend(_ path: String) -> FragmentMend.Outcome? {
        RecordingMend.withFile(path, mend)
    }

    private static func mend(_ fd: Int32, size: UInt64) -> FragmentMend.Outcome? {
        let total = Int(size / UInt64(packetSize))
        guard total > 0 else { return nil }
        let first = max(0, total - window / packetSize)
        let count = total - first
        var bytes = [UInt8](repeating: 0, count: count * packetSize)
        guard pread(fd, &bytes, bytes.count, off_t(first * packetSize)) == bytes.count else { return nil }
        var sync: UInt8 = 0
        guard pread(fd, &sync, 1, 0) == 1, sync == 0x47 else { return nil }
        guard let packets = Packets(bytes) else { return nil }
        guard let kept = packets.keptCount() else { return nil }
        let cut = UInt64((first + kept) * packetSize)
        guard cut < size else { return .whole }
        guard ftruncate(fd, off_t(cut)) == 0 else { return nil }
        let dropped = (kept..<count).filter { packets.pesStart[$0] != nil }.count
        return FragmentMend.Outcome(bytesCut: size - cut, samplesDropped: dropped)
    }

    /// The packets of the file's end: each one's PID, payload length, and for the first packet of a PES packet the
    /// length it gives (0: unbounded).
    struct Packets {
        var pid: [UInt16] = []
        var payload: [Int] = []
        var pesStart: [Int?] = []
        /// The PIDs that carry PES packets (frames), in the order first seen.
        var streams: [UInt16] = []

        /// Nil when a packet does not start with the sync byte, or its adaptation field runs past it.
        init?(_ bytes: [UInt8]) {
            let n = bytes.count / packetSize
            pid.reserveCapacity(n)
            payload.reserveCapacity(n)
            pesStart.reserveCapacity(n)
            for k in 0..<n {
                let p = k * packetSize
                guard bytes[p] == 0x47 else { return nil }
                let id = UInt16(bytes[p + 1] & 0x1F) << 8 | UInt16(bytes[p + 2])
                let unitStart = bytes[p + 1] & 0x40 != 0
                let control = (bytes[p + 3] >> 4) & 0x3
                var at = 4
                if control & 0x2 != 0 {
                    at += 1 + Int(bytes[p + 4])
                    guard at <= packetSize else { return nil }
                }
                let length = control & 0x1 != 0 ? packetSize - at : 0
                var start: Int?
                // A PES packet starts with 00 00 01, its stream ID and its length; PSI tables (PID 0, the PMT)
                // start with a pointer field and a table ID, never 00 00 01.
                if unitStart, length >= 6, id != 0, id != 0x1FFF,
                   bytes[p + at] == 0, bytes[p + at + 1] == 0, bytes[p + at + 2] == 1 {
                    start = Int(bytes[p + at + 4]) << 8 | Int(bytes[p + at + 5])
                    if !streams.contains(id) { streams.append(id) }
                }
                pid.append(id)
                payload.append(length)
                pesStart.append(start)
            }
        }

        /// How many packets to keep: cut before the first PES packet, of any stream, not known to be whole where
        /// the file is cut. Cutting before one may break another stream's frame that was whole, so this repeats
        /// until every stream's last frame before the cut is whole (a recording's streams settle in a round or two;
        /// junk that keeps moving it is refused). Nil when a frame the cut breaks started before these packets.
        func keptCount() -> Int? {
            var kept = pid.count
            var moved = true
            for _ in 0..<16 where moved {
                moved = false
                for stream in streams {
                    guard let last = (0..<kept).last(where: { pid[$0] == stream }) else { continue }
                    guard let start = (0...last).last(where: { pid[$0] == stream && pesStart[$0] != nil }) else {
                        // The stream's packets before the cut belong to a frame begun before the window.
                        if (0...last).contains(where: { pid[$0] == stream && payload[$0] > 0 }) { return nil }
                        continue
                    }
                    if !isWhole(stream, from: start, through: last) {
                        kept = start
                        moved = true
                    }
                }
            }
            return moved ? nil : kept
        }

        /// Whether the PES packet of `stream` that starts at packet `start` is whole by packet `last`, its last
        /// packet before the cut: its given length is there, or (unbounded) its stream's next packet starts a frame.
        private func isWhole(_ stream: UInt16, from start: Int, through last: Int) -> Bool {
            if let length = pesStart[start], length > 0 {
                let have = (start...last).reduce(0) { $0 + (pid[$1] == stream ? payload[$1] : 0) }
                return have >= 6 + length
            }
            guard let next = (last + 1..<pid.count).first(where: { pid[$0] == stream }) else { return false }
            return pesStart[next] != nil
        }
    }
}
