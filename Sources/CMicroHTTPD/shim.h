#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* Variadic libmicrohttpd calls Swift cannot make, wrapped for the one field each that Isthmus needs. */

/* The connection's socket (MHD_get_connection_info, MHD_CONNECTION_INFO_CONNECTION_FD); -1 if unknown. */
static inline int isthmus_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* The peer's address (MHD_get_connection_info, MHD_CONNECTION_INFO_CLIENT_ADDRESS); NULL if unknown. */
static inline const struct sockaddr *isthmus_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/* MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds): this connection's idle timeout. */
static inline enum MHD_Result isthmus_mhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    return MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}
