#ifndef PIPCOMPOSE_CRSVG_SHIM_H
#define PIPCOMPOSE_CRSVG_SHIM_H
// librsvg renders SVG with Cairo; gdk-pixbuf decodes PNG and JPEG.
#include <librsvg/rsvg.h>
#include <gdk-pixbuf/gdk-pixbuf.h>
#endif
