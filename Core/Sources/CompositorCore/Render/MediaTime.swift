/// A time on GStreamer's clocks or in a stream, in nanoseconds (a `GstClockTime`).
public typealias MediaTime = UInt64
