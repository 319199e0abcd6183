// Would non-temporal stores pay for wide slices (BENCHMARKS.md; src/stream.rs)? Gathers N
// random WIDTH-byte rows (8 KiB unless given) of a ROWS-row table into one reused output,
// each row copied with memcpy, then with SSE2 streaming stores (`movntdq`, which skip reading
// the output's lines before writing them); median of REPS calls each. Threads:
// OMP_NUM_THREADS.
//   gcc -O2 -fopenmp bench/stream_copy.c -o stream_copy
//   OMP_NUM_THREADS=2 ./stream_copy 10000 2000 31     # f64_wide quick: 82 MB table, 16 MB out
//   OMP_NUM_THREADS=2 ./stream_copy 100000 20000 9    # f64_wide full: 820 MB table, 164 MB out
//   OMP_NUM_THREADS=2 ./stream_copy 1000 640000 7 1024  # nd_batch full: a batch element's
//                                                     # 1 MB table, 655 MB out
//   OMP_NUM_THREADS=2 ./stream_copy 1000 64000 31 1024  # the same, 66 MB out
//   OMP_NUM_THREADS=2 ./stream_copy 1000000 200000 7 512  # embed full: 512 MB table
//   OMP_NUM_THREADS=2 ./stream_copy 1000000 500000 7 128  # nd_slices full: 128 MB table
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <emmintrin.h>
#include <omp.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void nt_copy(char*d,const char*s,size_t n){
  // d assumed 16-aligned
  size_t i=0;
  for(;i+64<=n;i+=64){
    __m128i a=_mm_loadu_si128((const __m128i*)(s+i)),b=_mm_loadu_si128((const __m128i*)(s+i+16)),
            c=_mm_loadu_si128((const __m128i*)(s+i+32)),e=_mm_loadu_si128((const __m128i*)(s+i+48));
    _mm_stream_si128((__m128i*)(d+i),a);_mm_stream_si128((__m128i*)(d+i+16),b);
    _mm_stream_si128((__m128i*)(d+i+32),c);_mm_stream_si128((__m128i*)(d+i+48),e);
  }
  memcpy(d+i,s+i,n-i);
}
int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  size_t rows=atol(argv[1]), n=atol(argv[2]), w=argc>4?atol(argv[4]):8192; int reps=atoi(argv[3]);
  char*t=aligned_alloc(4096,rows*w); memset(t,1,rows*w);
  char*o=aligned_alloc(4096,n*w); memset(o,0,n*w);
  int*idx=malloc(n*4); srand(1); for(size_t i=0;i<n;i++) idx[i]=rand()%rows;
  for(int mode=0;mode<2;mode++){
    double ts[64];
    for(int r=0;r<reps;r++){
      double t0=now();
      #pragma omp parallel for schedule(static)
      for(size_t i=0;i<n;i++){ if(mode) nt_copy(o+i*w,t+(size_t)idx[i]*w,w); else memcpy(o+i*w,t+(size_t)idx[i]*w,w);}
      if(mode) _mm_sfence();
      ts[r]=now()-t0;
    }
    qsort(ts,reps,sizeof(double),cmp);
    printf("%s threads=%d rows=%zu n=%zu median %.3f ms (%.1f GB/s out)\n",mode?"stream":"memcpy",omp_get_max_threads(),rows,n,ts[reps/2]*1e3,n*w/ts[reps/2]/1e9);
  }
}
