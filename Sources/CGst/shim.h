#ifndef PIPCOMPOSE_CGST_SHIM_H
#define PIPCOMPOSE_CGST_SHIM_H
// The one header through which Swift reaches GStreamer. `cgst_` functions exist only where
// Swift cannot import the C API as it is: function-like macros, variadic functions and casts.
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <gst/pbutils/pbutils.h>
#include <gst/sdp/sdp.h>
#include <gst/webrtc/webrtc.h>

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

// GST_APP_SINK is a cast macro.
static inline GstAppSink *cgst_app_sink(GstElement *element) { return GST_APP_SINK(element); }

// GST_BUFFER_PTS is a macro over a struct field.
static inline GstClockTime cgst_buffer_pts(GstBuffer *buffer) { return GST_BUFFER_PTS(buffer); }

// GST_BUFFER_DTS is a macro over a struct field.
static inline GstClockTime cgst_buffer_dts(GstBuffer *buffer) { return GST_BUFFER_DTS(buffer); }

// GST_BUFFER_FLAG_IS_SET is a macro.
static inline gboolean cgst_buffer_is_delta(GstBuffer *buffer) {
    return GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
}

// gst_buffer_make_writable and gst_buffer_ref/unref-as-macros: make_writable is a macro.
static inline GstBuffer *cgst_buffer_make_writable(GstBuffer *buffer) { return gst_buffer_make_writable(buffer); }

// GST_VIDEO_FRAME_PLANE_DATA / STRIDE are macros over GstVideoFrame fields.
static inline void *cgst_video_frame_data(GstVideoFrame *frame) { return GST_VIDEO_FRAME_PLANE_DATA(frame, 0); }
static inline gint cgst_video_frame_stride(GstVideoFrame *frame) { return GST_VIDEO_FRAME_PLANE_STRIDE(frame, 0); }
static inline void *cgst_video_frame_plane(GstVideoFrame *frame, guint plane) {
    return GST_VIDEO_FRAME_PLANE_DATA(frame, plane);
}
static inline gint cgst_video_frame_plane_stride(GstVideoFrame *frame, guint plane) {
    return GST_VIDEO_FRAME_PLANE_STRIDE(frame, plane);
}

// GST_OBJECT_NAME is a macro; the name is borrowed.
static inline const gchar *cgst_object_name(GstObject *object) { return GST_OBJECT_NAME(object); }

// G_OBJECT / GST_OBJECT casts for passing elements to GObject APIs.
static inline GObject *cgst_gobject(gpointer object) { return G_OBJECT(object); }
static inline GstObject *cgst_object(gpointer object) { return GST_OBJECT(object); }

// g_object_get/set are variadic: gives the socket one element opened ("used-socket", udpsrc's once READY) to another
// ("socket", a udpsink's, used from its start), which then sends from the port the first receives on.
static inline gboolean cgst_share_socket(gpointer from, gpointer to) {
    GObject *socket = NULL;
    g_object_get(from, "used-socket", &socket, NULL);
    if (!socket) return FALSE;
    g_object_set(to, "socket", socket, "close-socket", FALSE, NULL);
    g_object_unref(socket);
    return TRUE;
}

// G_OBJECT_TYPE is a macro: whether an instance's class has a signal of that name (connecting to a missing one warns).
static inline gboolean cgst_has_signal(gpointer instance, const gchar *name) {
    return g_signal_lookup(name, G_OBJECT_TYPE(instance)) != 0;
}

// GST_SECOND is a macro of an expression.
static inline GstClockTime cgst_second(void) { return GST_SECOND; }

// GST_BUFFER_PTS / DTS are macros over struct fields.
static inline void cgst_buffer_set_pts_dts(GstBuffer *buffer, GstClockTime pts, GstClockTime dts) {
    GST_BUFFER_PTS(buffer) = pts;
    GST_BUFFER_DTS(buffer) = dts;
}

// G_VALUE_INIT and G_TYPE_STRING are macros; a token's role is set through a GValue because
// gst_structure_set is variadic.
static inline void cgst_structure_set_string(GstStructure *s, const gchar *field, const gchar *value) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_STRING);
    g_value_set_string(&v, value);
    gst_structure_set_value(s, field, &v);
    g_value_unset(&v);
}

// gst_tag_list_new is variadic: a tag list holding only a title.
static inline GstTagList *cgst_tag_list_new_title(const gchar *title) {
    return gst_tag_list_new(GST_TAG_TITLE, title, NULL);
}

// GST_IS_TAG_SETTER / GST_TAG_SETTER are type-check and cast macros.
static inline gboolean cgst_is_tag_setter(GstElement *element) { return GST_IS_TAG_SETTER(element); }
static inline GstTagSetter *cgst_tag_setter(GstElement *element) { return GST_TAG_SETTER(element); }

// webrtcbin's action signals are emitted by name, and g_signal_emit_by_name is variadic.
static inline void cgst_webrtc_set_description(GstElement *webrtc, const gchar *signal,
                                               GstWebRTCSessionDescription *description, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, signal, description, promise);
}
static inline void cgst_webrtc_create_answer(GstElement *webrtc, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "create-answer", NULL, promise);
}
static inline void cgst_webrtc_create_offer(GstElement *webrtc, GstPromise *promise) {
    g_signal_emit_by_name(webrtc, "create-offer", NULL, promise);
}
// "add-transceiver": a transceiver of the given direction whose codec preferences are `caps` (the caller's reference
// stays the caller's); the transceiver webrtcbin returns is dropped at once (webrtcbin keeps its own).
static inline gboolean cgst_webrtc_add_transceiver(GstElement *webrtc, GstWebRTCRTPTransceiverDirection direction,
                                                   GstCaps *caps) {
    GstWebRTCRTPTransceiver *transceiver = NULL;
    g_signal_emit_by_name(webrtc, "add-transceiver", direction, caps, &transceiver);
    if (transceiver == NULL) return FALSE;
    gst_object_unref(transceiver);
    return TRUE;
}

// "get-transceivers" (variadic emit; a GArray of borrowed transceivers): every transceiver set to `direction`, for a
// publisher whose send pads webrtcbin made as send-and-receive.
static inline guint cgst_webrtc_set_directions(GstElement *webrtc, GstWebRTCRTPTransceiverDirection direction) {
    GArray *transceivers = NULL;
    g_signal_emit_by_name(webrtc, "get-transceivers", &transceivers);
    if (transceivers == NULL) return 0;
    guint n = transceivers->len;
    for (guint i = 0; i < n; i++) {
        g_object_set(g_array_index(transceivers, GstWebRTCRTPTransceiver *, i), "direction", direction, NULL);
    }
    g_array_unref(transceivers);
    return n;
}

// GST_ELEMENT_ERROR is a macro: an error message from `element` on its pipeline's bus, as if the element failed.
static inline void cgst_element_post_error(GstElement *element, const gchar *message) {
    GError *error = g_error_new_literal(GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED, message);
    gst_element_post_message(element, gst_message_new_error(GST_OBJECT(element), error, NULL));
    g_error_free(error);
}

// GstWebRTCNice's "add-local-ip-address" action signal (variadic emit): ICE then gathers on those addresses only.
static inline gboolean cgst_webrtc_ice_add_local_ip(gpointer ice, const gchar *address) {
    gboolean added = FALSE;
    g_signal_emit_by_name(ice, "add-local-ip-address", address, &added);
    return added;
}

// webrtcbin's "add-ice-candidate" action signal (variadic emit): a remote candidate (`candidate:…`, or an empty one
// for the end of candidates) of the media section at `mline`.
static inline void cgst_webrtc_add_ice_candidate(GstElement *webrtc, guint mline, const gchar *candidate) {
    g_signal_emit_by_name(webrtc, "add-ice-candidate", mline, candidate);
}

// g_object_get is variadic: one property holding an enum, an int64, or a pointer (an object or boxed copy, transfer full).
static inline gint cgst_object_get_enum(gpointer object, const gchar *property) {
    gint value = 0;
    g_object_get(object, property, &value, NULL);
    return value;
}
static inline gint64 cgst_object_get_int64(gpointer object, const gchar *property) {
    gint64 value = 0;
    g_object_get(object, property, &value, NULL);
    return value;
}
static inline gpointer cgst_object_get_pointer(gpointer object, const gchar *property) {
    gpointer value = NULL;
    g_object_get(object, property, &value, NULL);
    return value;
}

// GST_PAD_PROBE_INFO_EVENT and GST_EVENT_TYPE are macros.
static inline GstEvent *cgst_probe_info_event(GstPadProbeInfo *info) { return GST_PAD_PROBE_INFO_EVENT(info); }

// A probe's buffer, or the first buffer of its buffer list (NULL for an empty list or neither).
static inline GstBuffer *cgst_probe_info_first_buffer(GstPadProbeInfo *info) {
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) return GST_PAD_PROBE_INFO_BUFFER(info);
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        return gst_buffer_list_length(list) > 0 ? gst_buffer_list_get(list, 0) : NULL;
    }
    return NULL;
}

// GST_IS_BASE_SINK is a type-check macro.
static inline gboolean cgst_is_base_sink(gpointer object) { return GST_IS_BASE_SINK(object); }

// An action signal that takes one string and returns nothing (wpesrc's "run-javascript"); the emit is variadic.
static inline void cgst_emit_string(gpointer object, const gchar *signal, const gchar *text) {
    g_signal_emit_by_name(object, signal, text);
}

// A raw video frame's own size and row stride (its GstVideoMeta), which may differ from its caps (wpevideosrc
// sends the view's size), its first row's offset; FALSE without one.
static inline gboolean cgst_buffer_video_size(GstBuffer *buffer, gint *width, gint *height, gint *stride,
                                              gsize *offset) {
    GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
    if (!meta) return FALSE;
    *width = (gint)meta->width;
    *height = (gint)meta->height;
    *stride = meta->stride[0];
    *offset = meta->offset[0];
    return TRUE;
}

#endif
