#ifndef PIPCOMPOSE_CPANGO_SHIM_H
#define PIPCOMPOSE_CPANGO_SHIM_H
// Cairo and Pango, as Swift imports them; no shims are needed so far.
#include <cairo.h>
#include <pango/pangocairo.h>
#endif
