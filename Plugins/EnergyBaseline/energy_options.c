/* A deliberately tiny JSON-subset parser: one flat object of numbers. Bounded by the input's NUL, never
 * reads past it, never allocates. */
#include "energy_options.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

energy_options_t energy_options_default(void) {
    energy_options_t o;
    o.threshold = 1.0;
    o.max_speakers = 8;
    return o;
}

typedef struct cursor {
    const char *p;
    char *error;
    size_t error_size;
} cursor_t;

static int fail(cursor_t *c, const char *message) {
    if (c->error && c->error_size > 0) snprintf(c->error, c->error_size, "options: %s", message);
    return -1;
}

static void skip_ws(cursor_t *c) {
    while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r') c->p++;
}

/* Reads a JSON string into buf (escapes other than \" and \\ are rejected: keys are plain ASCII). */
static int parse_string(cursor_t *c, char *buf, size_t buf_size) {
    size_t n = 0;
    if (*c->p != '"') return fail(c, "expected a string key");
    c->p++;
    for (;;) {
        char ch = *c->p;
        if (ch == '\0') return fail(c, "unterminated string");
        c->p++;
        if (ch == '"') break;
        if (ch == '\\') {
            ch = *c->p;
            if (ch != '"' && ch != '\\') return fail(c, "unsupported escape in key");
            c->p++;
        }
        if (n + 1 >= buf_size) return fail(c, "unknown option (key too long)");
        buf[n++] = ch;
    }
    buf[n] = '\0';
    return 0;
}

static int parse_number(cursor_t *c, const char *key, double *out) {
    char buf[64];
    size_t n = 0;
    const char *start = c->p;
    while (strchr("+-.eE0123456789", *c->p) != NULL && *c->p != '\0') {
        if (n + 1 >= sizeof buf) return fail(c, "number too long");
        buf[n++] = *c->p++;
    }
    buf[n] = '\0';
    if (n == 0) {
        char message[96];
        snprintf(message, sizeof message, "option '%s' must be a number", key);
        return fail(c, message);
    }
    char *end = NULL;
    double v = strtod(buf, &end);
    if (end != buf + n || !isfinite(v)) {
        c->p = start;
        return fail(c, "malformed number");
    }
    *out = v;
    return 0;
}

int energy_options_parse(const char *json, energy_options_t *out, char *error, size_t error_size) {
    energy_options_t o = energy_options_default();
    cursor_t c = {json ? json : "", error, error_size};
    skip_ws(&c);
    if (*c.p == '\0') {
        *out = o;
        return 0;
    }
    if (*c.p != '{') return fail(&c, "expected a JSON object");
    c.p++;
    skip_ws(&c);
    if (*c.p == '}') {
        c.p++;
    } else {
        for (;;) {
            char key[32];
            double value = 0;
            skip_ws(&c);
            if (parse_string(&c, key, sizeof key) != 0) return -1;
            skip_ws(&c);
            if (*c.p != ':') return fail(&c, "expected ':' after key");
            c.p++;
            skip_ws(&c);
            if (parse_number(&c, key, &value) != 0) return -1;
            if (strcmp(key, "threshold") == 0) {
                if (!(value > 0 && value <= 100)) return fail(&c, "threshold must be a number in (0, 100]");
                o.threshold = value;
            } else if (strcmp(key, "max_speakers") == 0) {
                if (value != floor(value) || value < 1 || value > ENERGY_MAX_SPEAKERS_LIMIT)
                    return fail(&c, "max_speakers must be an integer in [1, 32]");
                o.max_speakers = (int)value;
            } else {
                char message[96];
                snprintf(message, sizeof message, "unknown option '%s' (known: threshold, max_speakers)", key);
                return fail(&c, message);
            }
            skip_ws(&c);
            if (*c.p == ',') {
                c.p++;
                continue;
            }
            if (*c.p == '}') {
                c.p++;
                break;
            }
            return fail(&c, "expected ',' or '}'");
        }
    }
    skip_ws(&c);
    if (*c.p != '\0') return fail(&c, "trailing text after the object");
    *out = o;
    return 0;
}
