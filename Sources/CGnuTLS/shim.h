#ifndef LIVEBIND_CGNUTLS_SHIM_H
#define LIVEBIND_CGNUTLS_SHIM_H

#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>

#endif
