/*
 * The --slow-flush-ms shim (bench/support/slow-flush.ts builds it): loaded into
 * a server with LD_PRELOAD, it stands in for libc's fsync and fdatasync. Each
 * call runs the real one, then sleeps SLOW_FLUSH_MS more, as a slower disk
 * would, and counts itself: the count, 20 decimal digits, is rewritten at the
 * start of the file SLOW_FLUSH_COUNT_FILE names, so that it can be read while
 * the process runs and after it is killed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static struct timespec delay;
static int count_fd = -1;
static atomic_long flushes;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void init(void) {
  real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  const char *ms = getenv("SLOW_FLUSH_MS");
  long n = ms ? atol(ms) : 0;
  delay.tv_sec = n / 1000;
  delay.tv_nsec = (n % 1000) * 1000000L;
  const char *file = getenv("SLOW_FLUSH_COUNT_FILE");
  /* Truncated: the count is this process's alone. */
  if (file) count_fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

/* After the real flush: count it, then wait. Keeps the flush's errno. */
static int after_flush(int result) {
  int saved = errno;
  atomic_fetch_add(&flushes, 1);
  if (count_fd >= 0) {
    /* Under a lock, the last write holds the newest count even when threads race. */
    char text[24];
    pthread_mutex_lock(&count_lock);
    int length = snprintf(text, sizeof text, "%020ld", atomic_load(&flushes));
    if (pwrite(count_fd, text, length, 0) != length) { /* a lost count: nothing to do */ }
    pthread_mutex_unlock(&count_lock);
  }
  struct timespec left = delay;
  while ((left.tv_sec || left.tv_nsec) && nanosleep(&left, &left) == -1 && errno == EINTR) {}
  errno = saved;
  return result;
}

int fsync(int fd) { return after_flush(real_fsync(fd)); }
int fdatasync(int fd) { return after_flush(real_fdatasync(fd)); }
