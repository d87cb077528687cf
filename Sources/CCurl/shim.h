#ifndef ISTHMUS_CCURL_SHIM_H
#define ISTHMUS_CCURL_SHIM_H

// libcurl (`Sources/Curl/Curl.swift` is the only Swift file that imports it).
// curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per kind of argument. Macros Swift does not import are functions here too.

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

/// The callback type of CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
typedef size_t (*isthmus_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode isthmus_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode isthmus_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode isthmus_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode isthmus_curl_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode isthmus_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode isthmus_curl_easy_setopt_callback(CURL *handle, CURLoption option, isthmus_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLMcode isthmus_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLcode isthmus_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode isthmus_curl_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode isthmus_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

/// The callback type of CURLOPT_OPENSOCKETFUNCTION (media fetches check each address before connecting).
typedef curl_socket_t (*isthmus_curl_opensocket_callback)(void *context, curlsocktype purpose, struct curl_sockaddr *address);

static inline CURLcode isthmus_curl_easy_setopt_opensocket(CURL *handle, isthmus_curl_opensocket_callback value) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, value);
}

static inline curl_socket_t isthmus_curl_socket_bad(void) { return CURL_SOCKET_BAD; }
static inline size_t isthmus_curl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }

static inline long isthmus_curl_global_default(void) { return CURL_GLOBAL_DEFAULT; }
static inline long isthmus_curl_pipe_multiplex(void) { return CURLPIPE_MULTIPLEX; }
static inline int isthmus_curl_error_size(void) { return CURL_ERROR_SIZE; }

#endif
