// Which frame of WebKit's wpesrc hands out: wpesrc 1.22 (on the shared-memory path, software GL) copies the view's
// newest frame into every buffer it makes, at the caps' rate, whether WebKit drew a new one or not, and says nothing
// of which. It tells WebKit "frame complete" exactly when it takes a new frame for a buffer (WPEView::buffer()), and
// only then. pipcompose's executable defines that libWPEBackend-fdo function (exported, so that the plugin's call,
// through its PLT, binds here) to count the calls, and passes each one on to the real function. A page's process then
// knows a buffer that copies the same WebKit frame as the last one it looked at, and skips comparing it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include "cwpeview.h"

static atomic_ulong handed;

typedef void (*frame_complete_fn)(void *);

static frame_complete_fn real_frame_complete(void) {
    static _Atomic(frame_complete_fn) real;
    frame_complete_fn f = atomic_load(&real);
    if (f) return f;
    // The library the plugin loaded (never loads it: RTLD_NOLOAD), then anything after this executable.
    void *lib = dlopen("libWPEBackend-fdo-1.0.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib) f = (frame_complete_fn)dlsym(lib, "wpe_view_backend_exportable_fdo_dispatch_frame_complete");
    if (!f) f = (frame_complete_fn)dlsym(RTLD_NEXT, "wpe_view_backend_exportable_fdo_dispatch_frame_complete");
    if (f) atomic_store(&real, f);
    return f;
}

__attribute__((visibility("default")))
void wpe_view_backend_exportable_fdo_dispatch_frame_complete(void *exportable) {
    frame_complete_fn f = real_frame_complete();
    // Counted only when passed on: a count that moves means WebKit is told, as without pipcompose.
    if (!f) return;
    atomic_fetch_add(&handed, 1);
    f(exportable);
}

unsigned long cwpe_frames_handed(void) { return atomic_load(&handed); }
