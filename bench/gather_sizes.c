// The plain C random gather of physlim.c (2 threads, O[i] = P[I[i]], f32 values, uint32
// indices, 4 KiB pages) on a table of any size, to tell whether a table's size moves the C
// rate (bench/LOG.md, "nd_elems against JAX": nd_elems' table is 64 MB, physlim's 40 MB).
// Prints M elements per second, the median of 7 runs.
//   gcc -O3 -march=native -pthread bench/gather_sizes.c -o /tmp/gather_sizes
//   /tmp/gather_sizes 10000000 20000000 && /tmp/gather_sizes 16000000 4000000   # floats, reads
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 88172645463325252ull;
static inline uint64_t xs(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

typedef struct { const float *table; const uint32_t *idx; size_t n; float *out; } job_t;

static void *run(void *arg) {
  job_t *j = arg;
  for (size_t i = 0; i < j->n; i++) j->out[i] = j->table[j->idx[i]];
  return 0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s TABLE_FLOATS READS\n", argv[0]);
    return 2;
  }
  size_t floats = strtoull(argv[1], 0, 10), reads = strtoull(argv[2], 0, 10);
  float *table = malloc(floats * 4);
  uint32_t *idx = malloc(reads * 4);
  float *out = malloc(reads * 4);
  if (!floats || floats > UINT32_MAX || !table || !idx || !out) {
    fprintf(stderr, "bad sizes\n");
    return 2;
  }
  for (size_t i = 0; i < floats; i++) table[i] = (float)i;
  for (size_t i = 0; i < reads; i++) idx[i] = (uint32_t)(xs() % floats);
  memset(out, 0, reads * 4);
  double t[7];
  for (int r = 0; r < 7; r++) {
    size_t half = reads / 2;
    job_t j[2] = {{table, idx, half, out}, {table, idx + half, reads - half, out + half}};
    double t0 = now();
    pthread_t th;
    pthread_create(&th, 0, run, &j[1]);
    run(&j[0]);
    pthread_join(th, 0);
    t[r] = now() - t0;
  }
  qsort(t, 7, sizeof t[0], cmpd);
  printf("table %zu MB, %zu reads: %.1f M elem/s (median of 7)\n", floats * 4 >> 20, reads,
         reads / t[3] / 1e6);
  return 0;
}
