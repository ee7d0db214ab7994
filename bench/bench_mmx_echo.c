/*
 * bench_mmx_echo.c — the cheapest mmexternal helper there is: it answers {} to every input line,
 * so rsyslog + mmexternal running it is the floor of any mmexternal pipeline on the same input
 * (bench/enrich_h2h.sh's "floor" run, Issue 34 point 8). It parses nothing and looks nothing up.
 *
 * Protocol (rsyslog's mmexternal, spec MX7): rsyslog writes one line and waits for the reply line,
 * so each read's complete lines are answered in one write before the next read — a reply is never
 * held back while rsyslog waits. Ends at EOF. It prints no BENCH lines itself: the script times
 * rsyslog with it. `bench_mmx_echo FILE` also appends every line it reads to FILE (the script's
 * untimed capture of rsyslog's fulljson lines, replayed without rsyslog). `bench_mmx_echo -r
 * REPLY` answers every line with the first line of the file REPLY instead of {} (a reply of the
 * size kcache sends, so rsyslog's own cost of parsing and merging it is in the floor too).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The first line of path with its LF (malloc'd), or NULL. */
static char *reply_of(const char *path, size_t *len)
{
    FILE *f = fopen(path, "re");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = f ? getline(&line, &cap, f) : -1;
    if (f)
        fclose(f);
    if (n <= 0 || line[n - 1] != '\n') {
        free(line);
        return NULL;
    }
    *len = (size_t)n;
    return line;
}

int main(int argc, char **argv)
{
    static char in[1 << 16];
    const char *reply = "{}\n";
    size_t rlen = 3;
    if (argc > 2 && !strcmp(argv[1], "-r")) {
        if (!(reply = reply_of(argv[2], &rlen)))
            return 1;
        argc -= 2;
        argv += 2;
    }
    int save = argc > 1 ? open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
    if (argc > 1 && save < 0)
        return 1;
    char *out = malloc(rlen * sizeof in);
    if (!out)
        return 1;
    for (;;) {
        ssize_t r = read(STDIN_FILENO, in, sizeof in);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        size_t n = 0;
        for (const char *p = in; (p = memchr(p, '\n', (size_t)(in + r - p))); p++) {
            memcpy(out + n, reply, rlen);
            n += rlen;
        }
        if ((save >= 0 && write_all(save, in, (size_t)r)) || write_all(STDOUT_FILENO, out, n))
            return 1;
    }
}
