/*
 * bench/proc_usage.h — process figures from /proc and getrusage for the benches (bench_sync,
 * bench_watch_ingest, bench_informer, bench_controller; header-only, static: each bench .c file
 * is its own program).
 *
 *   long   status_kb(field)  a /proc/self/status field in KiB (VmRSS, VmHWM), -1 if absent
 *   void   reset_hwm(void)   resets VmHWM to the current RSS (/proc/self/clear_refs "5")
 *   double proc_cpu(pid)     utime + stime of another process, seconds (/proc/PID/stat)
 *   double self_cpu(void)    this process's user + system CPU, seconds (getrusage)
 *   long   self_minflt(void) this process's minor page faults so far
 *   void   self_usage(&user, &sys, &minflt, &csw)  this process's user and system CPU seconds,
 *                            minor page faults and context switches (voluntary + involuntary;
 *                            csw may be NULL) so far
 *   double run_delay(void)   sum over this process's threads of the time spent runnable but
 *                            waiting for a CPU (schedstat field 2): the machine's load, not
 *                            the code
 *   double med(v, n)         median of n ≤ 64 doubles
 */
#ifndef KC_BENCH_PROC_USAGE_H
#define KC_BENCH_PROC_USAGE_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static inline long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t fl = strlen(field);
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, field, fl) == 0 && line[fl] == ':')
            v = strtol(line + fl + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

static inline void reset_hwm(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static inline double proc_cpu(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t got = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[got] = '\0';
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (p)
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static inline double run_delay(void)
{
    DIR *d = opendir("/proc/self/task");
    double sum = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300];
        unsigned long long run = 0, wait = 0;
        snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
        if (f && fscanf(f, "%llu %llu", &run, &wait) == 2)
            sum += wait / 1e9;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return sum;
}

static inline double self_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static inline long self_minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static inline void self_usage(double *user, double *sys, long *minflt, long *csw)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    *sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    *minflt = ru.ru_minflt;
    if (csw)
        *csw = ru.ru_nvcsw + ru.ru_nivcsw;
}

static inline int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double med(const double *v, int n)
{
    double s[64];
    memcpy(s, v, sizeof(*v) * (size_t)n);
    qsort(s, (size_t)n, sizeof(*s), cmp_d);
    return s[n / 2];
}

#endif
