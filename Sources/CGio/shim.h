#ifndef PIPCOMPOSE_CGIO_SHIM_H
#define PIPCOMPOSE_CGIO_SHIM_H
// GIO's D-Bus client, for following media players (MPRIS) on the session bus. No shims: GDBus imports as it is.
#include <gio/gio.h>
#endif
