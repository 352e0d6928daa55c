// WebKit's view inside a web page's wpevideosrc (WPE WebKit), which GStreamer's API does not reach: its size, the
// address it shows, and how many of its frames wpesrc took. WebKit and libwpe are loaded by the wpe plugin, not
// linked here: their functions are looked up in the libraries already loaded. Swift reaches this through one type,
// WpeView (Sources/Compositor/GStreamer/WpeView.swift). The header names no GLib or GStreamer type, so that Swift
// sees the view as an opaque pointer and the element as a raw one.
#pragma once

/// A watched view: its wanted size and the address it shows, shared between WebKit's thread (where everything that
/// touches the view runs) and the page's other threads. Reference counted: the watcher holds one reference, and so
/// does each signal handler and pending resize, so it lives as long as anything may still use it.
typedef struct CwpeView CwpeView;

/// Watches `src` (a wpevideosrc before it starts, a GstElement *) through its "configure-web-view" signal: the only
/// way to resize the page without new caps (which 1.22 applies from the streaming thread without its lock: it
/// aborted) and to read the address it shows. The view is made `width` x `height` as soon as it exists. The caller
/// holds the one reference returned (cwpe_view_release).
CwpeView *cwpe_view_watch(void *src, unsigned width, unsigned height);

/// Asks for the view at `width` x `height` (done on WebKit's thread); 0 when the view cannot be resized.
int cwpe_view_resize(CwpeView *view, unsigned width, unsigned height);

/// The view is going away (the pipeline stops): nothing more is done to it.
void cwpe_view_forget(CwpeView *view);

/// What the view shows now (a copy to free()), or NULL before it loaded anything.
char *cwpe_view_uri(CwpeView *view);

/// Gives back the caller's reference; the memory goes when WebKit's thread holds none either.
void cwpe_view_release(CwpeView *view);

/// How many times wpesrc took a new frame from WebKit's view in this process (wpe_frames.c); 0 until the first, and
/// always 0 where the count cannot be made (then nothing can be told from it).
unsigned long cwpe_frames_handed(void);
