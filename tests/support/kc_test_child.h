/*
 * tests/support/kc_test_child.h — run a piece of a test in a child process (stderr silenced) and
 * check how it ended: for behaviour that stops a process (a failed debug assertion traps), which
 * a test must observe from outside. Header-only, static.
 */
#ifndef KC_TEST_CHILD_H
#define KC_TEST_CHILD_H

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* fn in a forked child (which then exits 0); its wait status. */
static inline int kc_test_in_child(void (*fn)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* cmocka catches SIGILL/SIGTRAP (and would turn the trap into exit(1)): not here. */
        signal(SIGILL, SIG_DFL);
        signal(SIGTRAP, SIG_DFL);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDERR_FILENO);
        fn();
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* The child trapped (a failed KC__DEBUG_ASSERT) in Debug/sanitizer builds, and exited normally in
 * release builds, where the assertion is compiled out. */
static inline void kc_test_expect_trap_in_debug(int status)
{
#ifdef KC_DEBUG_ASSERTS
    assert_true(WIFSIGNALED(status));
    assert_true(WTERMSIG(status) == SIGILL || WTERMSIG(status) == SIGTRAP);
#else
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
#endif
}

#endif
