/*
 * Returning from main while informers run must not crash (issue 16 point 9): before the fix
 * about one run in fifteen died at exit with "pure virtual method called" (simdjson's kernels
 * destroyed under a decoding reflector) or SIGSEGV. The embedded API server runs in this process
 * with a writer thread keeping the watches busy; helper_exit (a separate program linked with the
 * shared libkcache) starts informers against it and returns from main — right after starting them,
 * once synced, with a health endpoint and a cached client, or by calling exit() from an event
 * handler. Every run must exit with status 0 and no signal.
 */
#include "test_informer_fixture.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

/* About one run in fifteen crashed before the fix: 40 runs per mode (160 in all) catch it with
 * near certainty. Sanitizer builds run each helper ~20x slower and look for other faults (races,
 * bad accesses) that a few runs already exercise. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RUNS_PER_MODE 8
#else
#define RUNS_PER_MODE 40
#endif

typedef struct writer {
    ifx *f;
    atomic_bool stop;
    pthread_t thread;
} writer;

/* Updates keep every helper's configmaps watch delivering events while it exits. */
static void *writer_main(void *arg)
{
    writer *w = arg;
    for (unsigned i = 0; !atomic_load(&w->stop); i++) {
        char val[32];
        snprintf(val, sizeof(val), "%u", i);
        ifx_cm_update(w->f, "default", "churn", val);
    }
    return NULL;
}

extern char **environ;

/* The environment for the helper, built before any fork (a child of a threaded process may only
 * exec): ours, with ASAN_OPTIONS ending in detect_leaks=0 — the helper returns without freeing
 * anything, by design, and a later option overrides an earlier one. */
typedef struct helper_env {
    char **envp;
    char *asan;
} helper_env;

static void helper_env_init(helper_env *h)
{
    size_t n = 0;
    while (environ[n])
        n++;
    h->envp = calloc(n + 2, sizeof(char *));
    const char *cur = getenv("ASAN_OPTIONS");
    size_t len = strlen("ASAN_OPTIONS=detect_leaks=0:") + (cur ? strlen(cur) : 0) + 1;
    h->asan = malloc(len);
    snprintf(h->asan, len, "ASAN_OPTIONS=%s%sdetect_leaks=0", cur ? cur : "", cur ? ":" : "");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "ASAN_OPTIONS=", 13) != 0)
            h->envp[k++] = environ[i];
    h->envp[k] = h->asan;
}

static void helper_env_free(helper_env *h)
{
    free(h->envp);
    free(h->asan);
}

/* Run helper_exit once; returns its wait status. */
static int run_helper(const helper_env *env, const char *url, const char *mode)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/bin/helper_exit", KC_BINARY_DIR);
    char *argv[] = {path, (char *)url, (char *)mode, NULL};
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execve(path, argv, env->envp);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void run_mode(const char *mode)
{
    ifx f;
    ifx_up(&f, "configmaps=1500:ns=default,secrets=200:ns=default,pods=200:ns=default");
    assert_int_equal(ifx_cm_create(&f, "default", "churn", "0", NULL), 0);
    writer w = {.f = &f};
    atomic_init(&w.stop, false);
    assert_int_equal(pthread_create(&w.thread, NULL, writer_main, &w), 0);
    helper_env env;
    helper_env_init(&env);
    int bad = 0;
    for (int i = 0; i < RUNS_PER_MODE; i++) {
        int st = run_helper(&env, kc_server_url(f.srv), mode);
        if (WIFSIGNALED(st) || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "helper_exit %s run %d: %s %d\n", mode, i,
                    WIFSIGNALED(st) ? "signal" : "exit status",
                    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
            bad++;
        }
    }
    helper_env_free(&env);
    atomic_store(&w.stop, true);
    pthread_join(w.thread, NULL);
    ifx_down(&f);
    assert_int_equal(bad, 0);
}

static void test_exit_safety_return_while_listing(void **st)
{
    run_mode("early");
}

static void test_exit_safety_return_while_watching(void **st)
{
    run_mode("synced");
}

static void test_exit_safety_return_with_health_and_cached_client(void **st)
{
    run_mode("full");
}

static void test_exit_safety_exit_from_a_handler(void **st)
{
    run_mode("handler");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_safety_return_while_listing),
        cmocka_unit_test(test_exit_safety_return_while_watching),
        cmocka_unit_test(test_exit_safety_return_with_health_and_cached_client),
        cmocka_unit_test(test_exit_safety_exit_from_a_handler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
