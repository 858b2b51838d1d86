/* The two C23 entry points bochscpu-python's wheel (built against glibc 2.38 or later) links, for older
 * glibc such as Debian 12's 2.36: preloaded by check.sh. The C23 versions differ only in also parsing
 * "0b" prefixes, which bochscpu never reads. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

unsigned long long __isoc23_strtoull(const char *text, char **end, int base) {
    return strtoull(text, end, base);
}

int __isoc23_sscanf(const char *text, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int assigned = vsscanf(text, format, args);
    va_end(args);
    return assigned;
}
