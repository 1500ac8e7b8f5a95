# Ctrl-C inside compiled loops: the one place that decides when a nogil loop looks for a signal.
#
# A loop that runs without the GIL cannot see a KeyboardInterrupt: CPython's handler only
# records the signal, and the exception is raised when the interpreter next runs bytecode --
# after the loop.  So the loops here watch the clock (a vDSO read, ~20 ns, done once per
# block of elements whose size adapts to keep the reads 0.25-2 ms apart) and, at most once every
# DPB_LOOK_PERIOD seconds, take the GIL to call PyErr_CheckSignals.  If it raises (or an
# earlier chunk of the same ufunc call already left an exception set), the loop stops and
# leaves the exception set: numpy then raises it from the ufunc call (it checks
# PyErr_Occurred after every legacy inner loop, the mechanism its own integer `power` uses to
# raise from a loop).  Calls shorter than DPB_LOOK_PERIOD never take the GIL.
#
# dpb_last_look is per-thread scheduling state (when this thread last looked): it decides only
# when a loop looks for a signal, never what any element evaluates to.  It is thread-local so
# that numpy's buffered iteration -- which calls the inner loop once per 8192-element buffer --
# still looks every DPB_LOOK_PERIOD across the calls, and so that threads never share it.
#
# With DPB_WATCH_BY_COUNT defined (fuzz/build_native.py's coverage-instrumented build only) the
# clock is never read: the block doubles after each block up to DPB_BLOCK_MAX and every block end
# looks for a signal.  How many blocks a loop runs then depends on its element count alone, so
# the coverage the fuzzer sees in these loops (hit counts per edge) is the same on every run and
# the fuzz gate repeats itself; the values computed are the same either way.

cdef extern from *:
    """
    #include <Python.h>
    #if defined(DPB_WATCH_BY_COUNT)
    /* no clock (below) */
    #elif defined(_WIN32)
    #include <windows.h>
    #define DPB_THREAD_LOCAL __declspec(thread)
    static double dpb_monotonic(void) {
        LARGE_INTEGER f, c;
        QueryPerformanceFrequency(&f);
        QueryPerformanceCounter(&c);
        return (double)c.QuadPart / (double)f.QuadPart;
    }
    #else
    #include <time.h>
    #define DPB_THREAD_LOCAL __thread
    static double dpb_monotonic(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
    }
    #endif

    /* seconds between looks for a pending signal: well under the 0.2 s a user waits for Ctrl-C */
    #define DPB_LOOK_PERIOD 0.02
    /* the block size adapts so that clock reads are 0.25-2 ms apart; at most 2^16 elements */
    #define DPB_BLOCK_MAX 65536

    typedef struct { Py_ssize_t block; double last; } dpb_watch;

    /* no clock read here: a call that fits in the first block (scalars) never reads it */
    static void dpb_watch_start(dpb_watch *w) {
        w->block = 16;
        w->last = -1.0;
    }

    /* end (exclusive) of the next block of elements starting at i, of n */
    static Py_ssize_t dpb_watch_block_end(const dpb_watch *w, Py_ssize_t i, Py_ssize_t n) {
        return (n - i <= w->block) ? n : i + w->block;
    }

    #if defined(DPB_WATCH_BY_COUNT)
    /* After a block: 1 if the loop must stop because an exception is set, else 0 (no clock) */
    static int dpb_watch_stop(dpb_watch *w) {
        if (w->block < DPB_BLOCK_MAX) w->block *= 2;
        PyGILState_STATE s = PyGILState_Ensure();
        int stop = (PyErr_Occurred() != NULL) || (PyErr_CheckSignals() < 0);
        PyGILState_Release(s);
        return stop;
    }
    #else
    static DPB_THREAD_LOCAL double dpb_last_look = 0.0;

    /* After a block: 1 if the loop must stop because an exception is set (KeyboardInterrupt,
       or any exception a signal handler raised), else 0. */
    static int dpb_watch_stop(dpb_watch *w) {
        double now = dpb_monotonic();
        double dt = (w->last < 0.0) ? 1e-3 : now - w->last;
        w->last = now;
        if (dt < 2.5e-4 && w->block < DPB_BLOCK_MAX) w->block *= 2;
        else if (dt > 2e-3 && w->block > 1) w->block /= 2;
        if (now - dpb_last_look < DPB_LOOK_PERIOD) return 0;
        dpb_last_look = now;
        PyGILState_STATE s = PyGILState_Ensure();
        int stop = (PyErr_Occurred() != NULL) || (PyErr_CheckSignals() < 0);
        PyGILState_Release(s);
        if (stop) dpb_last_look = 0.0;  /* the next chunk of this call looks at once, and stops */
        return stop;
    }
    #endif
    """
    ctypedef struct dpb_watch:
        pass
    void dpb_watch_start(dpb_watch *w) noexcept nogil
    Py_ssize_t dpb_watch_block_end(const dpb_watch *w, Py_ssize_t i, Py_ssize_t n) noexcept nogil
    int dpb_watch_stop(dpb_watch *w) noexcept nogil
