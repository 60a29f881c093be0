// Does a 4 KiB managed-memory prefetch (GPU -> host, host -> GPU) depend on other managed buffers
// of the process, moved, held on either side or freed? Medians of 40 prefetches each way.
// Build and run: nvcc -arch=sm_90 -O2 -o pf scripts/device/prefetch_neighbours.cu && ./pf
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
static cudaStream_t st; static cudaEvent_t e0,e1;
static cudaMemLocation gpu(){cudaMemLocation l{}; l.type=cudaMemLocationTypeDevice; l.id=0; return l;}
static cudaMemLocation host(){cudaMemLocation l{}; l.type=cudaMemLocationTypeHost; l.id=0; return l;}
static void pf(void*p,size_t n,cudaMemLocation w){CK(cudaMemPrefetchAsync(p,n,w,0,st));}
// median us of n timed prefetches of p to `there`, each after an untimed one back
static double timed(void*p,size_t n,bool d2h,int reps){
  std::vector<double> v;
  for(int i=0;i<reps;i++){ pf(p,n,d2h?gpu():host()); CK(cudaEventRecord(e0,st)); pf(p,n,d2h?host():gpu()); CK(cudaEventRecord(e1,st)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms,e0,e1)); v.push_back(ms*1e3);}
  std::sort(v.begin(),v.end()); return v[v.size()/2];
}
static void report(const char*what,void*a){ double d=timed(a,4096,true,40), h=timed(a,4096,false,40); printf("%-58s d2h %6.1f us  h2d %6.1f us\n",what,d,h); fflush(stdout);}
int main(){
  CK(cudaSetDevice(0)); CK(cudaStreamCreate(&st)); CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  char*a; CK(cudaMallocManaged(&a,4096)); memset(a,1,4096);
  report("A alone",a); report("A alone again",a);
  size_t sizes[]={65536,1<<20,16<<20,256<<20};
  for(size_t s: sizes){
    char*b; CK(cudaMallocManaged(&b,s)); memset(b,2,s);
    char name[128];
    timed(b,s,true,10); timed(b,s,false,10);   // B back and forth, ends on the GPU
    snprintf(name,sizeof name,"after %zu KiB B moved, B held on GPU",s>>10); report(name,a);
    pf(b,s,host()); CK(cudaStreamSynchronize(st));
    snprintf(name,sizeof name,"  B moved to host, held"); report(name,a);
    CK(cudaFree(b));
    snprintf(name,sizeof name,"  B freed"); report(name,a);
  }
  // all held at once, as the runner's hold does
  std::vector<char*> held;
  for(size_t s: sizes){ char*b; CK(cudaMallocManaged(&b,s)); memset(b,2,s); timed(b,s,true,10); held.push_back(b);} // each ends on host (d2h last)
  report("all four held on host",a);
  for(size_t i=0;i<held.size();i++){ pf(held[i],sizes[i],gpu()); } CK(cudaStreamSynchronize(st));
  report("all four held on GPU",a);
  for(char*b:held) CK(cudaFree(b));
  report("all freed",a);
  report("all freed, again",a);
  return 0;
}
