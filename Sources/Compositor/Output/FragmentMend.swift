import Foundation

/// Mends a fragmented MP4 that stopped in the middle of a write (a full disk, a file size limit).
///
/// A recording's MP4 is a header (ftyp, moov) and then fragments, each a moof box (where each frame lies, and how
/// long it is) and the mdat box holding the frames. When the disk fills, the last write stops part way through a
/// fragment. Players still play the frames before the cut, but ffmpeg and ffprobe report "partial file" and "Invalid
/// NAL unit size" there, and a tool may stop reading. Mended, the last fragment lists only the frames that were
/// written whole, its mdat ends after the last of them, and the file is one a muxer could have written: nothing
/// written whole is lost.
enum FragmentMend {
    /// What a mend changed (shared by the menders of every container). A file cut exactly after a frame loses no
    /// byte, yet its last fragment's moof (or cluster's size) still claims what was never written: that is rewritten
    /// in place, and it is a change as much as a cut is.
    struct Outcome: Equatable {
        /// Bytes cut from the end of the file.
        var bytesCut: UInt64
        /// Frames (samples, of every track) the last fragment listed that were not written whole.
        var samplesDropped: Int
        /// Bytes changed in place: a moof's sample counts and `free` box, an mdat's, cluster's or segment's size.
        var bytesRewritten = 0
        /// Frames the last fragment (or cluster) keeps, when the mender counted them.
        var samplesKept: Int?

        /// Nothing was touched: the file was whole.
        static let whole = Outcome(bytesCut: 0, samplesDropped: 0)
        var changed: Bool { bytesCut > 0 || bytesRewritten > 0 }
    }

    /// Mends the MP4 at `path` (see the type). Nil when the file cannot be read or written, or does not start as an
    /// MP4 does (ftyp, then a whole moov): such a file is left as it is. `.whole`: it was whole, and was not touched.
    @discardableResult
    static func mend(_ path: String) -> Outcome? {
        RecordingMend.withFile(path) { fd, size in mend(File(fd: fd, size: size)) }
    }

    private static func mend(_ file: File) -> Outcome? {
        let fd = file.fd
        guard let scan = file.scan() else { return nil }
        guard scan.whole < file.size else { return .whole }
        // The last fragment's moof is whole and its mdat begun: keep the frames written whole.
        if let moof = scan.openFragment, let mdat = scan.openData,
           let mended = file.mendFragment(moofAt: moof.offset, length: moof.length, mdatAt: mdat) {
            guard ftruncate(fd, off_t(mended.end)) == 0 else { return nil }
            return Outcome(bytesCut: file.size - mended.end, samplesDropped: mended.dropped,
                           bytesRewritten: mended.rewritten, samplesKept: mended.kept)
        }
        // Otherwise the file ends on its last whole box.
        guard ftruncate(fd, off_t(scan.whole)) == 0 else { return nil }
        return Outcome(bytesCut: file.size - scan.whole, samplesDropped: 0)
    }

    /// A box header: where the box starts, its length, its type, and how long the header is.
    private struct Box {
        var offset: UInt64
        var length: UInt64
        var type: String
        var header: UInt64
    }

    private struct File {
        let fd: Int32
        let size: UInt64

        func read(_ count: Int, at offset: UInt64) -> [UInt8]? {
            guard offset + UInt64(count) <= size else { return nil }
            var bytes = [UInt8](repeating: 0, count: count)
            return pread(fd, &bytes, count, off_t(offset)) == count ? bytes : nil
        }

        /// Writes `bytes` over the file's at `offset`; how many bytes differ from what was there (nothing is
        /// written when none does), or nil when it cannot be read or written.
        func rewrite(_ bytes: [UInt8], at offset: UInt64) -> Int? {
            guard let old = read(bytes.count, at: offset) else { return nil }
            let changed = zip(old, bytes).filter { $0 != $1 }.count
            guard changed > 0 else { return 0 }
            return pwrite(fd, bytes, bytes.count, off_t(offset)) == bytes.count ? changed : nil
        }

        /// The header of the box at `offset` in `bytes` (or in the file), whether or not the box is whole.
        static func box(in bytes: [UInt8], at offset: Int, base: UInt64) -> Box? {
            guard offset + 8 <= bytes.count else { return nil }
            var length = UInt64(be32(bytes, offset))
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            var header: UInt64 = 8
            if length == 1 {
                guard offset + 16 <= bytes.count else { return nil }
                length = bytes[(offset + 8)..<(offset + 16)].reduce(0) { $0 << 8 | UInt64($1) }
                header = 16
            }
            guard length >= header || length == 0 else { return nil }
            return Box(offset: base + UInt64(offset), length: length, type: type, header: header)
        }

        /// Where the file stops being whole, and the fragment it stops in (its whole moof, and where its mdat
        /// begins) when the cut is inside that fragment's mdat. Nil when the file does not begin as an MP4.
        func scan() -> (whole: UInt64, openFragment: (offset: UInt64, length: UInt64)?, openData: UInt64?)? {
            var offset: UInt64 = 0, whole: UInt64 = 0, count = 0, moov = false
            var moof: (offset: UInt64, length: UInt64)?
            while offset + 8 <= size {
                guard let head = read(Int(min(16, size - offset)), at: offset),
                      var box = File.box(in: head, at: 0, base: offset) else { break }
                // "To the end of the file": whole by definition, and the last box.
                if box.length == 0 { box.length = size - offset }
                count += 1
                if count == 1 && box.type != "ftyp" { return nil }
                guard offset + box.length <= size else {
                    // The box the write stopped in.
                    let data = box.type == "mdat" && moof != nil ? offset : nil
                    return moov ? (whole, data == nil ? nil : moof, data) : nil
                }
                offset += box.length
                switch box.type {
                case "moov": moov = true; whole = offset
                case "moof": moof = (box.offset, box.length)
                case "mdat": moof = nil; whole = offset
                // A box between a moof and its mdat leaves the fragment open.
                default: if moof == nil { whole = offset }
                }
            }
            return moov ? (whole, nil, nil) : nil
        }

        /// Rewrites the fragment whose whole moof is at `moofAt` and whose mdat, cut short, begins at `mdatAt`: each
        /// track run lists only its leading frames that lie whole in the file, and the mdat ends after the last
        /// frame kept. Returns where the file now ends, how many frames were dropped and kept, and how many bytes the
        /// moof and mdat header changed by; nil when the fragment has no whole frame or a layout this does not follow
        /// (the file is then cut before the fragment).
        func mendFragment(moofAt moofOffset: UInt64, length: UInt64,
                          mdatAt mdatOffset: UInt64) -> (end: UInt64, dropped: Int, kept: Int, rewritten: Int)? {
            guard length <= 1 << 20, var moof = read(Int(length), at: moofOffset),
                  let mdatHead = read(Int(min(16, size - mdatOffset)), at: mdatOffset),
                  let mdat = File.box(in: mdatHead, at: 0, base: mdatOffset) else { return nil }
            let dataStart = mdatOffset + mdat.header
            var runs: [Run] = []
            var previousEnd = moofOffset
            var tracks = 0
            var at = 8
            while let traf = File.box(in: moof, at: at, base: 0), traf.length >= 8, traf.length <= UInt64(moof.count - at) {
                defer { at += Int(traf.length) }
                guard traf.type == "traf" else { continue }
                guard let found = runsOfTrack(moof, from: at + 8, to: at + Int(traf.length), moofOffset: moofOffset,
                                              firstTrack: tracks == 0, previousEnd: previousEnd)
                else { return nil }
                tracks += 1
                runs += found.runs
                previousEnd = found.end
            }
            guard !runs.isEmpty else { return nil }
            // Each run keeps its frames that lie whole in the file, inside the mdat's data.
            var end = dataStart, dropped = 0, kept = 0
            for i in runs.indices {
                var k = 0
                while k < runs[i].sizes.count {
                    let from = runs[i].start + runs[i].sizes[..<k].reduce(0, +)
                    guard from >= dataStart, from + runs[i].sizes[k] <= size else { break }
                    k += 1
                }
                // What the run no longer lists becomes a `free` box, which needs 8 bytes.
                while runs[i].entryBytes > 0 && k > 0 && k < runs[i].sizes.count
                        && (runs[i].sizes.count - k) * runs[i].entryBytes < 8 { k -= 1 }
                runs[i].keep = k
                kept += k
                dropped += runs[i].sizes.count - k
                if k > 0 { end = max(end, runs[i].start + runs[i].sizes[..<k].reduce(0, +)) }
            }
            guard kept > 0 else { return nil }
            for run in runs where run.keep < run.sizes.count {
                let spare = (run.sizes.count - run.keep) * run.entryBytes
                put32(&moof, run.boxAt + 12, UInt32(run.keep))
                guard spare > 0 else { continue }
                put32(&moof, run.boxAt, UInt32(run.boxLength - spare))
                let free = run.boxAt + run.boxLength - spare
                put32(&moof, free, UInt32(spare))
                moof.replaceSubrange((free + 4)..<(free + 8), with: Array("free".utf8))
            }
            var header = [UInt8](repeating: 0, count: Int(mdat.header))
            let mdatLength = end - mdatOffset
            if mdat.header == 16 {
                put32(&header, 0, 1)
                for b in 0..<8 { header[8 + b] = UInt8(truncatingIfNeeded: mdatLength >> (56 - 8 * UInt64(b))) }
            } else {
                guard mdatLength <= UInt64(UInt32.max) else { return nil }
                put32(&header, 0, UInt32(mdatLength))
            }
            header.replaceSubrange(4..<8, with: Array("mdat".utf8))
            guard let inMoof = rewrite(moof, at: moofOffset), let inHeader = rewrite(header, at: mdatOffset) else {
                return nil
            }
            return (end, dropped, kept, inMoof + inHeader)
        }

        /// A track run: the box's place in the moof, the size of each of its entries, where its first frame lies in
        /// the file and each frame's size; `keep`, how many it keeps.
        struct Run {
            var boxAt: Int
            var boxLength: Int
            var entryBytes: Int
            var start: UInt64
            var sizes: [UInt64]
            var keep = 0
        }

        /// The runs of the traf whose children lie in `from..<to` of `moof`, and where its data ends. Nil for a
        /// layout this does not follow (frame sizes from defaults in the moov, a run past its box).
        func runsOfTrack(_ moof: [UInt8], from: Int, to: Int, moofOffset: UInt64, firstTrack: Bool,
                         previousEnd: UInt64) -> (runs: [Run], end: UInt64)? {
            var base: UInt64?, defaultSize: UInt64?
            var runs: [Run] = []
            var at = from
            var next: UInt64?
            while let box = File.box(in: moof, at: at, base: 0), box.length >= 8, box.length <= UInt64(to - at) {
                defer { at += Int(box.length) }
                guard box.type == "tfhd" || box.type == "trun" else { continue }
                // A full box: version and flags, then its fields, which must lie inside it.
                guard box.length >= 12 else { return nil }
                let flags = Int(be32(moof, at + 8)) & 0xFFFFFF
                let needed = box.type == "tfhd"
                    ? 16 + (flags & 0x1 != 0 ? 8 : 0) + [0x2, 0x8, 0x10].filter { flags & $0 != 0 }.count * 4
                    : 16 + [0x1, 0x4].filter { flags & $0 != 0 }.count * 4
                guard needed <= Int(box.length) else { return nil }
                switch box.type {
                case "tfhd":
                    var p = at + 16
                    if flags & 0x1 != 0 {
                        let b = moof[p..<(p + 8)].reduce(0) { $0 << 8 | UInt64($1) }
                        guard b <= size else { return nil }
                        base = b
                        p += 8
                    } else {
                        // ISO/IEC 14496-12: the moof's start, or where the previous track's data ended.
                        base = flags & 0x20000 != 0 || firstTrack ? moofOffset : previousEnd
                    }
                    if flags & 0x2 != 0 { p += 4 }
                    if flags & 0x8 != 0 { p += 4 }
                    if flags & 0x10 != 0 { defaultSize = UInt64(be32(moof, p)) }
                case "trun":
                    guard let base else { return nil }
                    let count = Int(be32(moof, at + 12))
                    var p = at + 16
                    var start = next ?? base
                    if flags & 0x1 != 0 {
                        let s = Int64(base) + Int64(Int32(bitPattern: be32(moof, p)))
                        guard s >= 0 else { return nil }
                        start = UInt64(s)
                        p += 4
                    }
                    if flags & 0x4 != 0 { p += 4 }
                    let fields = [0x100, 0x200, 0x400, 0x800].filter { flags & $0 != 0 }.count
                    let entry = 4 * fields
                    guard p + count * entry == at + Int(box.length) else { return nil }
                    var sizes: [UInt64] = []
                    for n in 0..<count {
                        if flags & 0x200 != 0 {
                            let offset = p + n * entry + (flags & 0x100 != 0 ? 4 : 0)
                            sizes.append(UInt64(be32(moof, offset)))
                        } else if let defaultSize {
                            sizes.append(defaultSize)
                        } else {
                            return nil
                        }
                    }
                    runs.append(Run(boxAt: at, boxLength: Int(box.length), entryBytes: entry, start: start, sizes: sizes))
                    next = start + sizes.reduce(0, +)
                default:
                    break
                }
            }
            return (runs, next ?? previousEnd)
        }
    }

}

/// The big-endian 32-bit number at `i`.
private func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
    UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
}

private func put32(_ b: inout [UInt8], _ i: Int, _ v: UInt32) {
    for k in 0..<4 { b[i + k] = UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32(k))) }
}
