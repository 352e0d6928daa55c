#ifndef PIPCOMPOSE_CGST_SHIM_H
#define PIPCOMPOSE_CGST_SHIM_H
// The one header through which Swift reaches GStreamer. `cgst_` functions exist only where
// Swift cannot import the C API as it is: function-like macros, variadic functions and casts.
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <gst/rtsp-server/rtsp-server.h>

// GST_BUFFER_PTS / DURATION are macros over struct fields.
static inline void cgst_buffer_set_timing(GstBuffer *buffer, GstClockTime pts, GstClockTime duration) {
    GST_BUFFER_PTS(buffer) = pts;
    GST_BUFFER_DURATION(buffer) = duration;
}

// GST_BUFFER_FLAG_SET is a macro.
static inline void cgst_buffer_set_flags(GstBuffer *buffer, guint flags) {
    GST_BUFFER_FLAG_SET(buffer, flags);
}

// GST_MESSAGE_TYPE is a macro.
static inline GstMessageType cgst_message_type(GstMessage *message) {
    return GST_MESSAGE_TYPE(message);
}

// GST_MESSAGE_SRC is a macro; the source is borrowed (transfer none).
static inline GstObject *cgst_message_src(GstMessage *message) {
    return GST_MESSAGE_SRC(message);
}

// GST_BIN / GST_ELEMENT / GST_APP_SRC are cast macros.
static inline GstBin *cgst_bin(GstElement *element) { return GST_BIN(element); }
static inline GstAppSrc *cgst_app_src(GstElement *element) { return GST_APP_SRC(element); }
static inline GstElement *cgst_element(gpointer object) { return GST_ELEMENT(object); }

// GST_CLOCK_TIME_NONE is a macro of an expression Swift does not import.
static inline GstClockTime cgst_clock_time_none(void) { return GST_CLOCK_TIME_NONE; }

#endif
