#include <cuda_runtime.h>
#include <mpi.h>
#include <stdlib.h>
static void make_context(void) {
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return;
  cudaSetDevice((local ? atoi(local) : 0) % n);
  cudaFree(0);
}
int MPI_Init(int *argc, char ***argv) { int rc = PMPI_Init(argc, argv); make_context(); return rc; }
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided); make_context(); return rc;
}
