/*
 * Clock reads from the TSC for programs run inside the User-Mode Linux guest (LD_PRELOAD).
 *
 * UML has no vDSO fast path: every clock_gettime and gettimeofday is a trapped system call, about 65 us inside the
 * guest on the machines measured, where a Linux host answers from the TSC in the vDSO in tens of nanoseconds. A JVM
 * reads the clock hundreds of times per batch (System.nanoTime in parking, timed waits, Netty's event loop), so
 * without this library benchmark figures in the guest measure UML's system-call trap rather than the code under test.
 * perftest calibrates its cycle counter against gettimeofday, which this library makes steady as well.
 *
 * The clocks are anchored to the kernel's at load, then advanced by the TSC at the host's TSC rate: TSC_MHZ if set,
 * else the "cpu MHz" line of /proc/cpuinfo (rxe-vm.sh puts the host's there). Without a rate, or for any other clock
 * (CPU-time clocks, which threads use to measure themselves), the kernel answers as before.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static double nanos_per_tick;
static unsigned long long tsc_at_load;
static struct timespec monotonic_at_load, realtime_at_load;

static long kernel_clock(clockid_t clock, struct timespec *t) {
  return syscall(SYS_clock_gettime, clock, t);
}

static double tsc_mhz(void) {
  const char *env = getenv("TSC_MHZ");
  if (env != NULL && atof(env) > 0) {
    return atof(env);
  }
  FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
  double mhz = 0;
  char line[256];
  while (cpuinfo != NULL && fgets(line, sizeof line, cpuinfo) != NULL) {
    if (strncmp(line, "cpu MHz", 7) == 0 && strchr(line, ':') != NULL) {
      mhz = atof(strchr(line, ':') + 1);
      break;
    }
  }
  if (cpuinfo != NULL) {
    fclose(cpuinfo);
  }
  return mhz;
}

__attribute__((constructor)) static void anchor(void) {
  double mhz = tsc_mhz();
  if (mhz <= 0 || kernel_clock(CLOCK_MONOTONIC, &monotonic_at_load) != 0
      || kernel_clock(CLOCK_REALTIME, &realtime_at_load) != 0) {
    return;
  }
  tsc_at_load = __rdtsc();
  nanos_per_tick = 1000.0 / mhz;
}

static void advance(const struct timespec *anchor, struct timespec *t) {
  unsigned long long nanos = (unsigned long long) ((__rdtsc() - tsc_at_load) * nanos_per_tick) + anchor->tv_nsec;
  t->tv_sec = anchor->tv_sec + (time_t) (nanos / 1000000000ull);
  t->tv_nsec = (long) (nanos % 1000000000ull);
}

int clock_gettime(clockid_t clock, struct timespec *t) {
  if (nanos_per_tick > 0) {
    switch (clock) {
      case CLOCK_MONOTONIC:
      case CLOCK_MONOTONIC_RAW:
      case CLOCK_MONOTONIC_COARSE:
      case CLOCK_BOOTTIME:
        advance(&monotonic_at_load, t);
        return 0;
      case CLOCK_REALTIME:
      case CLOCK_REALTIME_COARSE:
        advance(&realtime_at_load, t);
        return 0;
      default:
        break;
    }
  }
  return (int) kernel_clock(clock, t);
}

int gettimeofday(struct timeval *tv, void *zone) {
  (void) zone;
  struct timespec now;
  if (clock_gettime(CLOCK_REALTIME, &now) != 0) {
    return -1;
  }
  tv->tv_sec = now.tv_sec;
  tv->tv_usec = now.tv_nsec / 1000;
  return 0;
}
