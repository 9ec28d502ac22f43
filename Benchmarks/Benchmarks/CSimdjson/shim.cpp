// The C functions of CSimdjson.h over simdjson's DOM API.
#include "CSimdjson.h"

#include <simdjson.h>
#include <string>

struct simdjson_bench_parser {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    bool parsed = false;
};

simdjson_bench_parser *simdjson_bench_parser_make(void) { return new simdjson_bench_parser(); }

void simdjson_bench_parser_free(simdjson_bench_parser *parser) { delete parser; }

// Touches every value, so that the parse is not only simdjson's tape but values a program can read.
static int64_t count_values(simdjson::dom::element element) {
    int64_t count = 1;
    switch (element.type()) {
    case simdjson::dom::element_type::ARRAY:
        for (simdjson::dom::element child : simdjson::dom::array(element)) count += count_values(child);
        break;
    case simdjson::dom::element_type::OBJECT:
        for (simdjson::dom::key_value_pair member : simdjson::dom::object(element)) {
            count += count_values(member.value);
        }
        break;
    default:
        break;
    }
    return count;
}

int64_t simdjson_bench_parse(simdjson_bench_parser *parser, const uint8_t *bytes, size_t length) {
    simdjson::dom::element root;
    // `parse` with `realloc_if_needed` copies the input into a padded buffer, as it must for text
    // that does not end in SIMDJSON_PADDING spare bytes; that copy is part of the measured parse.
    if (parser->parser.parse(reinterpret_cast<const char *>(bytes), length, true).get(root) != simdjson::SUCCESS) {
        parser->parsed = false;
        return -1;
    }
    parser->root = root;
    parser->parsed = true;
    return count_values(root);
}

int64_t simdjson_bench_serialize(simdjson_bench_parser *parser) {
    if (!parser->parsed) return -1;
    std::string text = simdjson::to_string(parser->root);
    return static_cast<int64_t>(text.size());
}
