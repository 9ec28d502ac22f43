// A C face on Debian's simdjson (libsimdjson-dev) for the JSON benchmarks: simdjson is C++, which
// Swift here calls through these few plain functions. Nothing but the benchmarks uses it.
#ifndef CSIMDJSON_H
#define CSIMDJSON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A reusable simdjson DOM parser (simdjson's own advice: one parser, many documents).
typedef struct simdjson_bench_parser simdjson_bench_parser;

/// A new parser; free it with `simdjson_bench_parser_free`.
simdjson_bench_parser *simdjson_bench_parser_make(void);

/// Frees a parser from `simdjson_bench_parser_make`.
void simdjson_bench_parser_free(simdjson_bench_parser *parser);

/// Parses `length` bytes into the parser's DOM and walks all of it; returns the number of values
/// (every scalar, array and object), or -1 when the text is not valid JSON.
int64_t simdjson_bench_parse(simdjson_bench_parser *parser, const uint8_t *bytes, size_t length);

/// Writes the DOM of the last successful parse back out as compact JSON text (simdjson's
/// `to_string`) and returns its length, or -1 when nothing was parsed.
int64_t simdjson_bench_serialize(simdjson_bench_parser *parser);

#ifdef __cplusplus
}
#endif

#endif
