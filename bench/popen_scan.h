/*
 * bench/popen_scan.h — run a command and read one result line from its output, for the benches
 * that hand a measurement to another process (bench_sync's fresh child, client-node through
 * bench/node_sync.h; header-only, static: each bench .c file is its own program).
 *
 *   int popen_scan(cmd, want, fmt, ...)
 *       Runs cmd (popen, through the shell) and scans each line of its stdout with fmt
 *       (vsscanf) into the pointers that follow; 0 when a line gave all `want` conversions (the
 *       last such line wins), -1 when none did or cmd could not start. The exit status is not
 *       looked at.
 */
#ifndef KC_BENCH_POPEN_SCAN_H
#define KC_BENCH_POPEN_SCAN_H

#include <stdarg.h>
#include <stdio.h>

__attribute__((format(scanf, 3, 4))) static int popen_scan(const char *cmd, int want,
                                                           const char *fmt, ...)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512];
    int ok = -1;
    while (fgets(line, sizeof(line), p)) {
        va_list ap;
        va_start(ap, fmt);
        if (vsscanf(line, fmt, ap) == want)
            ok = 0;
        va_end(ap);
    }
    pclose(p);
    return ok;
}

#endif
