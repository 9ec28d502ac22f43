#ifndef LIVEBIND_CMICROHTTPD_SHIM_H
#define LIVEBIND_CMICROHTTPD_SHIM_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* Wrapper around MHD_start_daemon, which is variadic: options travel as one
   MHD_OPTION_ARRAY whose last item is MHD_OPTION_END; `accept` decides, for
   each new connection, whether it is taken. */
static inline struct MHD_Daemon *
livebind_start_daemon(unsigned int flags, uint16_t port,
                      MHD_AcceptPolicyCallback accept,
                      MHD_AccessHandlerCallback handler, void *context,
                      const struct MHD_OptionItem *options)
{
    return MHD_start_daemon(flags, port, accept, context, handler, context,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/* Wrapper around MHD_get_daemon_info, which is variadic: the bound port (for port 0). */
static inline uint16_t
livebind_daemon_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* Wrapper around MHD_get_connection_info, which is variadic: the connection's socket. */
static inline int
livebind_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* Wrapper around MHD_get_connection_info, which is variadic: what the connection-notify callback
   stored for the connection (its socket context). */
static inline void *
livebind_connection_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/* Wrapper around MHD_set_connection_option, which is variadic: per-connection idle timeout. */
static inline enum MHD_Result
livebind_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds)
{
    return MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

/* MHD_SIZE_UNKNOWN is a macro Swift does not import. */
static inline uint64_t
livebind_size_unknown(void)
{
    return MHD_SIZE_UNKNOWN;
}

#endif
