set -u
E=build-trace/engine/commatlas-engine
export OPAL_PREFIX=/opt/ompi-cuda PATH=/opt/ompi-cuda/bin:$PATH LD_LIBRARY_PATH=/opt/ompi-cuda/lib:${LD_LIBRARY_PATH:-}
nvidia-smi -q | grep -i -E "persistence|Addressing" | sort | uniq -c
ls -la /dev/nvidia* | head
tm() { local t0=$(date +%s.%N); "$@" > /dev/null 2>&1; python3 -c "import sys;print('%.3f'%(float(sys.argv[2])-float(sys.argv[1])))" $t0 $(date +%s.%N); }
for r in 1 2 3; do echo "plain info: $(tm $E info --json)  topo: $(tm $E topo --json)"; done
python3 -c "
import os,time
fds=[os.open(p,os.O_RDWR) for p in ['/dev/nvidiactl','/dev/nvidia0','/dev/nvidia1']]
time.sleep(30)" &
H=$!
sleep 1
for r in 1 2 3; do echo "fd holder info: $(tm $E info --json)  topo: $(tm $E topo --json)"; done
kill $H
python3 -c "
import ctypes,time
c=ctypes.CDLL('libcuda.so.1'); print('cuInit',c.cuInit(0), flush=True)
time.sleep(30)" &
H=$!
sleep 2
for r in 1 2 3; do echo "cuInit holder info: $(tm $E info --json)  topo: $(tm $E topo --json)"; done
kill $H
for r in 1 2; do echo "plain again info: $(tm $E info --json)"; done
