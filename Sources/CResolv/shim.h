#include <stdlib.h>
#include <netinet/in.h>
#include <arpa/nameser.h>
#include <resolv.h>

/* glibc's resolver (libresolv) for SRV lookups: res_ninit is a macro Swift cannot see, and the state's fields
   (nameservers, timeouts, h_errno) are easier set here than through Swift's view of fixed-size C arrays. */

/* A resolver state of its own for one query, read from /etc/resolv.conf (so a query never shares the process-wide
   _res), each nameserver waited for `retrans` seconds, `retry` times; NULL when the configuration cannot be read. */
static inline res_state isthmus_res_open(int retrans, int retry) {
    res_state state = calloc(1, sizeof(struct __res_state));
    if (state == NULL) return NULL;
    if (res_ninit(state) != 0) {
        free(state);   /* not res_nclose: a failed init leaves _vcsock 0, and closing it would close stdin */
        return NULL;
    }
    state->retrans = retrans;
    state->retry = retry;
    return state;
}

/* Asks only `address` (IPv4; port in network order) instead of /etc/resolv.conf's nameservers. */
static inline void isthmus_res_use_nameserver(res_state state, struct in_addr address, in_port_t port) {
    struct sockaddr_in server = {0};
    server.sin_family = AF_INET;
    server.sin_addr = address;
    server.sin_port = port;
    state->nsaddr_list[0] = server;
    state->nscount = 1;
}

/* Frees what isthmus_res_open made. */
static inline void isthmus_res_close(res_state state) {
    res_nclose(state);
    free(state);
}

/* Why the last query failed (HOST_NOT_FOUND, NO_DATA, TRY_AGAIN, NO_RECOVERY, NETDB_INTERNAL). */
static inline int isthmus_res_h_errno(res_state state) {
    return state->res_h_errno;
}

/* The number of records in a parsed message's section (a macro in <arpa/nameser.h>). */
static inline int isthmus_ns_msg_count(const ns_msg *message, ns_sect section) {
    return ns_msg_count(*message, section);
}
