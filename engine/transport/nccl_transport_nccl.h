// NCCL as a transport (nccl_transport_nccl.cu): ncclSend/ncclRecv between NCCL ranks 0 and 1, with
// one MPI rank per GPU or one process driving every GPU, timed with CUDA events on the members'
// streams (or, for the reference loops, the bare nccl-tests loop).
#pragma once

#include "backends/nccl/bare_loop.h"
#include "backends/nccl/nccl_comm.h"
#include "transport/transport.h"

namespace commatlas {

// Makes the NCCL transport of `launch`'s team; `timing` BareLoop times one event pair around
// kBareIterations calls per sample (reference.nccl_sendrecv), Harness the harness's batches.
TransportMaker nccl_transport(nccl::NcclLaunch launch, nccl::NcclTiming timing = nccl::NcclTiming::Harness);

}  // namespace commatlas
