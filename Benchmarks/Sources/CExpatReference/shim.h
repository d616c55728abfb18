#ifndef PRESENCESTORE_CEXPAT_SHIM_H
#define PRESENCESTORE_CEXPAT_SHIM_H
#include <expat.h>
#endif
