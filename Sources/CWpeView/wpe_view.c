// WebKit's view inside wpevideosrc, reached through the element's "configure-web-view" signal (see cwpeview.h).
// Everything that touches the view runs on the thread WebKit lives on (WPE's own GLib context, current when the
// signal is emitted); the other threads only record what they want under the lock and queue it there.
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <glib-object.h>
#include "cwpeview.h"

struct CwpeView {
    GMutex lock;
    gpointer backend;                              // struct wpe_view_backend *, NULL until the view exists
    GMainContext *context;                         // WebKit's thread's context (a reference)
    void (*set_size)(gpointer, uint32_t, uint32_t);
    guint width, height;                           // the size wanted, applied on WebKit's thread
    guint applied_width, applied_height;
    gchar *uri;                                    // what the view shows now (notify::uri)
    gboolean found;                                // the WebKit and libwpe functions were there
};

static CwpeView *acquire(CwpeView *v) { return g_atomic_rc_box_acquire(v); }

static void clear(gpointer data) {
    CwpeView *v = data;
    g_mutex_clear(&v->lock);
    g_free(v->uri);
    if (v->context) g_main_context_unref(v->context);
}

void cwpe_view_release(CwpeView *v) { g_atomic_rc_box_release_full(v, clear); }

// A signal handler's reference, given back when the handler goes (with its instance).
static void release_handler(gpointer data, GClosure *closure) {
    (void)closure;
    cwpe_view_release(data);
}

// A queued resize's reference, given back when the idle source goes.
static void release_source(gpointer data) { cwpe_view_release(data); }

static void uri_changed(GObject *view, GParamSpec *spec, gpointer data) {
    (void)spec;
    CwpeView *v = data;
    gchar *uri = NULL;
    g_object_get(view, "uri", &uri, NULL);
    g_mutex_lock(&v->lock);
    g_free(v->uri);
    v->uri = uri;
    g_mutex_unlock(&v->lock);
}

// On WebKit's thread: the wanted size, if it is not the view's yet.
static gboolean apply(gpointer data) {
    CwpeView *v = data;
    g_mutex_lock(&v->lock);
    if (v->backend && v->width > 0 && (v->width != v->applied_width || v->height != v->applied_height)) {
        v->set_size(v->backend, v->width, v->height);
        v->applied_width = v->width;
        v->applied_height = v->height;
    }
    g_mutex_unlock(&v->lock);
    return G_SOURCE_REMOVE;
}

static void configured(gpointer src, GObject *view, gpointer data) {
    (void)src;
    CwpeView *v = data;
    void *webkit = dlopen("libWPEWebKit-1.1.so.0", RTLD_LAZY | RTLD_NOLOAD);
    void *wpe = dlopen("libwpe-1.0.so.1", RTLD_LAZY | RTLD_NOLOAD);
    gpointer (*get_backend)(gpointer) =
        webkit ? (gpointer (*)(gpointer))dlsym(webkit, "webkit_web_view_get_backend") : NULL;
    gpointer (*get_wpe)(gpointer) =
        webkit ? (gpointer (*)(gpointer))dlsym(webkit, "webkit_web_view_backend_get_wpe_backend") : NULL;
    void (*set_size)(gpointer, uint32_t, uint32_t) =
        wpe ? (void (*)(gpointer, uint32_t, uint32_t))dlsym(wpe, "wpe_view_backend_dispatch_set_size") : NULL;
    g_signal_connect_data(view, "notify::uri", G_CALLBACK(uri_changed), acquire(v), release_handler, 0);
    GMainContext *context = g_main_context_ref_thread_default();
    g_mutex_lock(&v->lock);
    if (get_backend && get_wpe && set_size) {
        gpointer backend = get_backend(view);
        v->backend = backend ? get_wpe(backend) : NULL;
        v->set_size = set_size;
        v->found = v->backend != NULL;
    }
    GMainContext *old = v->context;
    v->context = context;
    g_mutex_unlock(&v->lock);
    if (old) g_main_context_unref(old);
    apply(v);
}

CwpeView *cwpe_view_watch(void *src, unsigned width, unsigned height) {
    CwpeView *v = g_atomic_rc_box_new0(CwpeView);
    g_mutex_init(&v->lock);
    v->width = width;
    v->height = height;
    g_signal_connect_data(src, "configure-web-view", G_CALLBACK(configured), acquire(v), release_handler, 0);
    return v;
}

int cwpe_view_resize(CwpeView *v, unsigned width, unsigned height) {
    g_mutex_lock(&v->lock);
    v->width = width;
    v->height = height;
    GMainContext *context = v->context ? g_main_context_ref(v->context) : NULL;
    gboolean found = v->found;
    g_mutex_unlock(&v->lock);
    // Before the view exists there is nothing to queue: the size is applied when it comes.
    if (!context) return 1;
    GSource *source = g_idle_source_new();
    g_source_set_priority(source, G_PRIORITY_HIGH);
    g_source_set_callback(source, apply, acquire(v), release_source);
    g_source_attach(source, context);
    g_source_unref(source);
    g_main_context_unref(context);
    return found;
}

void cwpe_view_forget(CwpeView *v) {
    g_mutex_lock(&v->lock);
    v->backend = NULL;
    v->found = FALSE;
    g_mutex_unlock(&v->lock);
}

char *cwpe_view_uri(CwpeView *v) {
    g_mutex_lock(&v->lock);
    char *uri = v->uri ? strdup(v->uri) : NULL;
    g_mutex_unlock(&v->lock);
    return uri;
}
