// Whether one thread's libc memcpy depends on where the destination sits in its page (4K aliasing
// between source and destination, both page-aligned in the engine's buffers): 4 KiB to 256 MiB,
// destination offset by 0, 64, 256 and 2048 bytes, best of 5 timings of repeated copies each.
//   gcc -O2 scripts/device/page_offset_copy.c -o poc && taskset -c 3 ./poc
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(){
  size_t sizes[]={4096,16384,65536,262144,1<<20,16<<20,256<<20};
  size_t cap=(256u<<20)+8192; char *a=aligned_alloc(4096,cap), *b=aligned_alloc(4096,cap);
  memset(a,1,cap); memset(b,2,cap);
  size_t offs[]={0,64,256,2048};
  for(int si=0;si<7;si++){ size_t n=sizes[si]; printf("%7zu B:",n);
    for(int oi=0;oi<4;oi++){ char*d=b+offs[oi]; int reps=(int)(200000000/n)+3; double best=1e9;
      for(int t=0;t<5;t++){ double t0=now(); for(int r=0;r<reps;r++){ memcpy(d,a,n); __asm__ volatile(""::"r"(d):"memory");} double dt=(now()-t0)/reps; if(dt<best)best=dt;}
      printf("  off %4zu: %6.1f GB/s", offs[oi], n/best/1e9);}
    printf("\n");}
  return 0;}
