#ifndef PRESENCESTORE_CEXPAT_SHIM_H
#define PRESENCESTORE_CEXPAT_SHIM_H
#if __has_include(<expat.h>)
#include <expat.h>
#else
#error "libexpat's headers are missing: install them with 'apt-get install libexpat1-dev' (Debian, Ubuntu; script/bootstrap does) or 'brew install expat'"
#endif
#endif
