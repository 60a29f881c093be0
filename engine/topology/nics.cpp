#include "topology/nics.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"

namespace commatlas {
namespace {

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

bool is_pci_address(const std::string& s) {
  // dddd:bb:dd.f
  return s.size() == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.';
}

// The PCI components of a resolved sysfs device path: "pci0000:00" and every "dddd:bb:dd.f".
std::vector<std::string> pci_components(const std::string& resolved) {
  std::vector<std::string> out;
  std::stringstream in(resolved);
  std::string part;
  while (std::getline(in, part, '/'))
    if (part.rfind("pci", 0) == 0 || is_pci_address(part)) out.push_back(part);
  return out;
}

std::string resolve(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

void fill_pci(Nic& nic, const std::string& device_link) {
  const std::string resolved = resolve(device_link);
  if (resolved.empty()) return;
  nic.pci_path = pci_components(resolved);
  for (auto it = nic.pci_path.rbegin(); it != nic.pci_path.rend(); ++it)
    if (is_pci_address(*it)) {
      nic.pci_address = *it;
      break;
    }
  const std::string numa = read_first_line(resolved + "/numa_node");
  if (!numa.empty()) nic.numa_node = std::atoi(numa.c_str());
}

double leading_number(const std::string& text) {
  std::istringstream in(text);
  double v = 0;
  return in >> v ? v : 0;
}

}  // namespace

std::vector<std::string> pci_path_of(const std::string& sys_root, const std::string& pci_address) {
  if (pci_address.empty()) return {};
  const std::string resolved = resolve(sys_root + "/bus/pci/devices/" + pci_address);
  return resolved.empty() ? std::vector<std::string>{} : pci_components(resolved);
}

int pcie_hops(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) return -1;
  if (a.front() != b.front())  // different root complexes: up to the CPU and down again
    return static_cast<int>(a.size() + b.size());
  std::size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  return static_cast<int>((a.size() - common) + (b.size() - common));
}

std::vector<Nic> read_nics(const std::string& sys_root) {
  std::vector<Nic> nics;
  std::map<std::string, std::size_t> by_pci;  // PCI address -> index of the RDMA/cxi NIC on it

  const std::string ib = sys_root + "/class/infiniband/";
  for (const std::string& dev : list_dir(ib)) {
    const auto ports = list_dir(ib + dev + "/ports");
    for (const std::string& port : ports) {
      const std::string dir = ib + dev + "/ports/" + port + "/";
      Nic nic;
      nic.name = ports.size() == 1 ? dev : dev + ":" + port;
      const std::string layer = read_first_line(dir + "link_layer");
      nic.kind = layer == "Ethernet" ? "roce" : "infiniband";
      // "4: ACTIVE"
      const std::string state = read_first_line(dir + "state");
      nic.state = state.find(": ") != std::string::npos ? state.substr(state.find(": ") + 2) : state;
      nic.active = nic.state == "ACTIVE";
      nic.rate_text = read_first_line(dir + "rate");  // "200 Gb/sec (4X HDR)"
      nic.rate_gbit = leading_number(nic.rate_text);
      fill_pci(nic, ib + dev + "/device");
      if (!nic.pci_address.empty()) by_pci.emplace(nic.pci_address, nics.size());
      nics.push_back(nic);
    }
  }

  // Slingshot: the cxi device is the NIC; its hsn net interface carries the link speed.
  const std::string cxi = sys_root + "/class/cxi/";
  for (const std::string& dev : list_dir(cxi)) {
    Nic nic;
    nic.name = dev;
    nic.kind = "slingshot";
    fill_pci(nic, cxi + dev + "/device");
    if (!nic.pci_address.empty()) by_pci.emplace(nic.pci_address, nics.size());
    nics.push_back(nic);
  }

  const std::string net = sys_root + "/class/net/";
  for (const std::string& ifname : list_dir(net)) {
    Nic nic;
    nic.name = ifname;
    fill_pci(nic, net + ifname + "/device");
    if (nic.pci_path.empty()) continue;  // virtual: lo, veth, bridges, ifb
    const std::string speed = read_first_line(net + ifname + "/speed");  // Mb/s; -1 or unreadable when down
    const double mbit = leading_number(speed);
    const std::string oper = read_first_line(net + ifname + "/operstate");
    auto rdma = by_pci.find(nic.pci_address);
    if (rdma != by_pci.end()) {
      Nic& owner = nics[rdma->second];
      // IPoIB or a RoCE port's netdev: the same NIC. A cxi device takes its hsn interface's speed.
      if (owner.kind == "slingshot" && owner.rate_gbit == 0) {
        owner.rate_gbit = mbit > 0 ? mbit / 1000 : 0;
        owner.rate_text = speed.empty() ? "" : speed + " Mb/s (" + ifname + ")";
        owner.state = oper;
        owner.active = oper == "up";
      }
      continue;
    }
    nic.kind = "ethernet";
    nic.state = oper;
    nic.active = oper == "up" || oper == "unknown";  // virtio reports "unknown" on some kernels
    nic.rate_gbit = mbit > 0 ? mbit / 1000 : 0;
    nic.rate_text = speed.empty() ? "" : speed + " Mb/s";
    nics.push_back(nic);
  }
  std::sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) { return a.name < b.name; });
  return nics;
}

std::vector<GpuNic> closest_nics(const std::vector<GpuInfo>& gpus, const std::vector<Nic>& nics,
                                 const std::string& sys_root) {
  std::vector<GpuNic> out;
  for (const GpuInfo& g : gpus) {
    GpuNic best{g.index, "", -1};
    const auto path = pci_path_of(sys_root, g.pci_bus_id);
    double best_rate = -1;
    for (const Nic& n : nics) {
      if (!n.active) continue;
      const int hops = pcie_hops(path, n.pci_path);
      const bool better = best.nic.empty() || (hops >= 0 && (best.pcie_hops < 0 || hops < best.pcie_hops)) ||
                          (hops == best.pcie_hops && n.rate_gbit > best_rate);
      if (better) {
        best = {g.index, n.name, hops};
        best_rate = n.rate_gbit;
      }
    }
    out.push_back(best);
  }
  return out;
}

std::optional<Nic> nic_for_rank(const std::vector<Nic>& nics, const std::vector<GpuNic>& gpu_nics, std::optional<int> gpu) {
  if (gpu) {
    for (const GpuNic& g : gpu_nics)
      if (g.gpu == *gpu && !g.nic.empty())
        for (const Nic& n : nics)
          if (n.name == g.nic) return n;
  }
  std::optional<Nic> best;
  for (const Nic& n : nics)
    if (n.active && (!best || n.rate_gbit > best->rate_gbit)) best = n;
  return best;
}

std::optional<Peak> internode_peak(const std::optional<Nic>& a, const std::string& node_a, const std::optional<Nic>& b,
                                   const std::string& node_b, std::string* why) {
  auto unknown = [&](const std::string& reason) -> std::optional<Peak> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (!a) return unknown("no inter-node peak: " + node_a + " has no active NIC");
  if (!b) return unknown("no inter-node peak: " + node_b + " has no active NIC");
  if (a->rate_gbit <= 0) return unknown("no inter-node peak: " + a->name + " on " + node_a + " reports no link rate");
  if (b->rate_gbit <= 0) return unknown("no inter-node peak: " + b->name + " on " + node_b + " reports no link rate");
  const bool a_slower = a->rate_gbit <= b->rate_gbit;
  const Nic& slow = a_slower ? *a : *b;
  char text[256];
  std::snprintf(text, sizeof text, "inter-node: the slower NIC of the two ends, %s on %s (%s, %s, sysfs)", slow.name.c_str(),
                (a_slower ? node_a : node_b).c_str(), slow.kind.c_str(), slow.rate_text.c_str());
  return Peak{slow.gbps(), text};
}

std::string encode_nic(const std::optional<Nic>& nic) {
  if (!nic) return "";
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.17g", nic->rate_gbit);
  // Fields never hold a tab: names and sysfs texts are single words or short phrases.
  return nic->name + "\t" + nic->kind + "\t" + rate + "\t" + nic->rate_text + "\t" + nic->pci_address;
}

std::optional<Nic> decode_nic(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::vector<std::string> f;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, '\t')) f.push_back(part);
  if (f.size() < 3) return std::nullopt;
  Nic n;
  n.name = f[0];
  n.kind = f[1];
  n.rate_gbit = std::atof(f[2].c_str());
  if (f.size() > 3) n.rate_text = f[3];
  if (f.size() > 4) n.pci_address = f[4];
  n.active = true;
  return n;
}

void write_nics_json(const NodeNics& node, JsonWriter& out) {
  out.key("nics").begin_array();
  for (const Nic& n : node.nics) {
    out.begin_object();
    out.field("name", n.name).field("kind", n.kind).field("state", n.state).field("active", n.active);
    out.field("rate_gbit", n.rate_gbit).field("peak_gbps", n.gbps()).field("rate_text", n.rate_text);
    out.field("pci_address", n.pci_address).field("numa_node", n.numa_node);
    out.end_object();
  }
  out.end_array();
  out.key("gpu_nics").begin_array();
  for (const GpuNic& g : node.gpu_nics) {
    out.begin_object();
    out.field("gpu", g.gpu);
    out.key("nic");
    if (g.nic.empty()) out.null(); else out.value(g.nic);
    out.field("pcie_hops", g.pcie_hops);
    out.end_object();
  }
  out.end_array();
}

const NodeNics& node_nics() {
  static const NodeNics node = [] {
    NodeNics n;
    n.nics = read_nics("/sys");
    n.gpu_nics = closest_nics(gpu_topology().gpus, n.nics, "/sys");
    return n;
  }();
  return node;
}

}  // namespace commatlas
