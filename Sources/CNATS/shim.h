#ifndef LIVEBIND_CNATS_SHIM_H
#define LIVEBIND_CNATS_SHIM_H

/* The NATS C client (Debian's libnats-dev): connections, JetStream publish and ordered consumers.
   Everything it offers is callable from Swift as declared; this header adds nothing. */
#include <nats/nats.h>

#endif
