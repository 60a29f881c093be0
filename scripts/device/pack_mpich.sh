#!/usr/bin/env bash
# Packs this (Debian 12) machine's MPICH 4.0.2 for the lent GPU machines, which have none:
# Debian's packages unpacked, their libraries, headers and launcher moved under /opt/mpich, and
# the compiler wrappers' paths pointed there. The result is .device-carry/mpich-4.0.2-debian12.txz
# (unpack with `tar xf ... -C /`; run with LD_LIBRARY_PATH=/opt/mpich/lib for its UCX, hwloc and
# Slurm libraries). Host buffers only: Debian builds MPICH without CUDA.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download mpich libmpich12 libmpich-dev libhwloc15 libucx0 libslurm38 >/dev/null)
for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/x"; done
lib=$work/x/usr/lib/x86_64-linux-gnu
P=$work/opt/mpich
mkdir -p "$P/bin" "$P/lib" "$P/include"
cp -a "$lib"/*.so* "$lib/ucx" "$P/lib/"
rm -f "$P"/lib/libmpichfort* "$P"/lib/libmpichcxx*  # C only: the carry must stay small
cp -a "$work/x/usr/include/x86_64-linux-gnu/mpich/." "$P/include/"
cp -a "$work/x/usr/bin/"{hydra_pmi_proxy,mpiexec.hydra,mpichversion} "$P/bin/"
ln -s mpiexec.hydra "$P/bin/mpiexec"
for w in mpicc mpicxx; do
  sed -e 's|^prefix=.*|prefix=/opt/mpich|' -e 's|^exec_prefix=.*|exec_prefix=/opt/mpich|' \
      -e 's|^includedir=.*|includedir=/opt/mpich/include|' -e 's|^libdir=.*|libdir=/opt/mpich/lib|' \
      "$work/x/usr/bin/$w.mpich" > "$P/bin/$w"
  chmod +x "$P/bin/$w"
done
mkdir -p .device-carry
tar cJf .device-carry/mpich-4.0.2-debian12.txz -C "$work" opt/mpich
ls -la .device-carry/mpich-4.0.2-debian12.txz
