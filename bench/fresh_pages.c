// What a fresh output costs on this machine (bench/LOG.md, "Fresh outputs"): copies N MiB
// into memory from malloc (4 KiB pages), malloc + MADV_HUGEPAGE, mmap + MADV_HUGEPAGE,
// mmap + MAP_POPULATE, mmap + MADV_HUGEPAGE + MADV_POPULATE_WRITE, and into one reused
// buffer; on 1 and 2 threads; freeing inside the timing. Median of 11.
//   gcc -O2 -pthread bench/fresh_pages.c -o fresh_pages && ./fresh_pages 160
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
size_t N; char *src;
typedef struct {char*p; size_t a,b;} Job;
static void* fill(void*x){Job*j=x; memcpy(j->p+j->a, src+j->a, j->b-j->a); return 0;}
static void touch(char*p,int threads){ // interleaved 64 KiB chunks like rayon
  if(threads==1){memcpy(p,src,N);return;}
  pthread_t t[2]; Job j[2]={{p,0,N/2},{p,N/2,N}};
  for(int k=0;k<2;k++)pthread_create(&t[k],0,fill,&j[k]);
  for(int k=0;k<2;k++)pthread_join(t[k],0);
}
int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int c,char**v){
  N=(size_t)atol(v[1])<<20; src=malloc(N); memset(src,1,N);
  const char* modes[]={"malloc","malloc+thp","mmap+thp","mmap+populate","mmap+thp+populate","reuse"};
  char* keep=0;
  for(int m=0;m<6;m++) for(int th=1;th<=2;th++){
    double ts[11];
    for(int r=0;r<11;r++){
      double t0=now(); char*p;
      if(m<2){p=malloc(N); if(m==1){size_t lo=((size_t)p+(2<<20)-1)&~((size_t)(2<<20)-1); madvise((void*)lo,N-(lo-(size_t)p),MADV_HUGEPAGE);} }
      else if(m==5){ if(!keep){keep=malloc(N);memset(keep,0,N);} p=keep;}
      else { int fl=MAP_PRIVATE|MAP_ANONYMOUS; if(m==3||m==4) fl|=MAP_POPULATE;
        if(m==4){p=mmap(0,N,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); madvise(p,N,MADV_HUGEPAGE); madvise(p,N,MADV_POPULATE_WRITE);} else {
        p=mmap(0,N,PROT_READ|PROT_WRITE,fl,-1,0); if(m==2) madvise(p,N,MADV_HUGEPAGE);} }
      touch(p,th);
      if(m<2) free(p); else if(m<5) munmap(p,N);
      ts[r]=now()-t0;
    }
    qsort(ts,11,sizeof(double),cmp);
    printf("%-20s threads %d: %7.2f ms\n",modes[m],th,ts[5]*1e3);
  }
}
