#ifndef LIVEBIND_CCURL_SHIM_H
#define LIVEBIND_CCURL_SHIM_H

/* libcurl (Debian's libcurl4-openssl-dev; macOS has it in its SDK): the Swift client's HTTP.
   curl_easy_setopt and curl_easy_getinfo are variadic, so each kind of argument the client passes
   gets a typed wrapper; the pause and write-callback constants are macros Swift does not import. */
#include <curl/curl.h>

typedef size_t (*livebind_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode livebind_curl_set_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode livebind_curl_set_large(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode livebind_curl_set_pointer(CURL *easy, CURLoption option, const void *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode livebind_curl_set_callback(CURL *easy, CURLoption option, livebind_curl_data_callback value) {
    return curl_easy_setopt(easy, option, value);
}

static inline long livebind_curl_response_code(CURL *easy) {
    long code = 0;
    return curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK ? code : 0;
}

/* What a write callback returns to pause the transfer (curl keeps the data and offers it again
   after curl_easy_pause(easy, CURLPAUSE_CONT)), and that resume. */
static inline size_t livebind_curl_write_pause(void) { return CURL_WRITEFUNC_PAUSE; }
static inline CURLcode livebind_curl_resume(CURL *easy) { return curl_easy_pause(easy, CURLPAUSE_CONT); }

#endif
