#include "topology/goodput.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <set>

namespace commatlas {
namespace {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

struct Adjacency {
  int n = 0;
  std::vector<std::vector<int>> next;
  std::map<std::pair<int, int>, const LinkBundle*> bundle;  // both orders
};

Adjacency adjacency(const LinkGraph& g) {
  Adjacency adj;
  adj.n = g.gpus + g.switches;
  adj.next.assign(static_cast<std::size_t>(adj.n), {});
  for (const LinkBundle& b : g.bundles) {
    if (b.a < 0 || b.b < 0 || b.a >= adj.n || b.b >= adj.n || b.a == b.b || b.links <= 0) continue;
    if (adj.bundle.count({b.a, b.b})) continue;
    adj.next[b.a].push_back(b.b);
    adj.next[b.b].push_back(b.a);
    adj.bundle[{b.a, b.b}] = &b;
    adj.bundle[{b.b, b.a}] = &b;
  }
  return adj;
}

// Hop distances from `s` and the number of shortest paths to each vertex. Switches forward; a GPU
// forwards too (the study routes LUMI's GCD pairs through other GCDs).
void bfs(const Adjacency& adj, int s, std::vector<int>& dist, std::vector<double>& count) {
  dist.assign(static_cast<std::size_t>(adj.n), -1);
  count.assign(static_cast<std::size_t>(adj.n), 0);
  dist[s] = 0;
  count[s] = 1;
  std::deque<int> q{s};
  while (!q.empty()) {
    const int u = q.front();
    q.pop_front();
    for (int v : adj.next[u]) {
      if (dist[v] < 0) {
        dist[v] = dist[u] + 1;
        q.push_back(v);
      }
      if (dist[v] == dist[u] + 1) count[v] += count[u];
    }
  }
}

bool fully_connected(const LinkGraph& g, const Adjacency& adj) {
  if (g.switches > 0) {
    // Every GPU on the one switch (the NVSwitch node): a GPU reaches every other in two hops, none busy.
    for (int s = g.gpus; s < adj.n; ++s) {
      int linked = 0;
      for (int v : adj.next[s]) linked += v < g.gpus ? 1 : 0;
      if (linked == g.gpus) return true;
    }
    return false;
  }
  for (int a = 0; a < g.gpus; ++a)
    for (int b = a + 1; b < g.gpus; ++b)
      if (!adj.bundle.count({a, b})) return false;
  return true;
}

// Maximum number of edge-disjoint Hamiltonian cycles over the GPUs, counting a bundle's links as
// separate edges, and the sum of each cycle's slowest link. Exhaustive: nodes have a handful of GPUs.
struct Rings {
  int count = 0;
  double gbps = 0;
};

Rings edge_disjoint_rings(const LinkGraph& g, const Adjacency& adj) {
  const int n = g.gpus;
  std::vector<std::vector<int>> cycles;  // vertex order, starting at 0
  std::vector<int> path{0};
  std::vector<bool> used(static_cast<std::size_t>(n), false);
  used[0] = true;
  std::function<void()> extend = [&] {
    const int u = path.back();
    if (static_cast<int>(path.size()) == n) {
      if (adj.bundle.count({u, 0}) && (n > 2) && path[1] < path.back()) cycles.push_back(path);  // each cycle once
      return;
    }
    for (int v : adj.next[u]) {
      if (v >= n || used[v]) continue;
      used[v] = true;
      path.push_back(v);
      extend();
      path.pop_back();
      used[v] = false;
    }
  };
  extend();
  std::map<std::pair<int, int>, int> free_links;
  for (const auto& [key, b] : adj.bundle)
    if (key.first < key.second) free_links[key] = b->links;
  auto edge = [](int a, int b) { return std::make_pair(std::min(a, b), std::max(a, b)); };
  auto ring_rate = [&](const std::vector<int>& c) {
    double rate = 1e300;
    for (std::size_t i = 0; i < c.size(); ++i) rate = std::min(rate, adj.bundle.at(edge(c[i], c[(i + 1) % c.size()]))->link_gbps);
    return rate;
  };
  Rings best;
  // Depth-first over cycles (a cycle may be taken again while its links last).
  std::function<void(std::size_t, Rings)> choose = [&](std::size_t from, Rings have) {
    if (have.gbps > best.gbps || (have.gbps == best.gbps && have.count > best.count)) best = have;
    for (std::size_t i = from; i < cycles.size(); ++i) {
      const auto& c = cycles[i];
      bool fits = true;
      for (std::size_t k = 0; k < c.size() && fits; ++k) fits = free_links[edge(c[k], c[(k + 1) % c.size()])] > 0;
      if (!fits) continue;
      for (std::size_t k = 0; k < c.size(); ++k) --free_links[edge(c[k], c[(k + 1) % c.size()])];
      choose(i, Rings{have.count + 1, have.gbps + ring_rate(c)});
      for (std::size_t k = 0; k < c.size(); ++k) ++free_links[edge(c[k], c[(k + 1) % c.size()])];
    }
  };
  choose(0, Rings{});
  return best;
}

constexpr int kMaxSearchGpus = 12;

}  // namespace

std::optional<ExpectedGoodput> expected_alltoall(const LinkGraph& g, std::string* why) {
  auto unknown = [&](const std::string& r) -> std::optional<ExpectedGoodput> {
    if (why) *why = r;
    return std::nullopt;
  };
  if (g.gpus < 2) return unknown("no expected alltoall goodput: fewer than 2 GPUs");
  const Adjacency adj = adjacency(g);
  // Routes crossing each directed connection u->v (fractions where a pair has several shortest paths).
  std::map<std::pair<int, int>, double> routes;
  std::vector<int> ds, dd;
  std::vector<double> cs, cd;
  for (int s = 0; s < g.gpus; ++s) {
    bfs(adj, s, ds, cs);
    for (int d = 0; d < g.gpus; ++d) {
      if (d == s) continue;
      if (ds[d] < 0) return unknown("no expected alltoall goodput: GPU " + std::to_string(d) + " is not linked to GPU " + std::to_string(s));
      bfs(adj, d, dd, cd);  // undirected graph: distances to d are distances from d
      for (int u = 0; u < adj.n; ++u)
        for (int v : adj.next[u])
          if (ds[u] >= 0 && dd[v] >= 0 && ds[u] + 1 + dd[v] == ds[d]) routes[{u, v}] += cs[u] * cd[v] / cs[d];
    }
  }
  double index = 0, per_link_max = 0, pair = 1e300;
  for (const auto& [key, load] : routes) {
    const LinkBundle& b = *adj.bundle.at(key);
    index = std::max(index, load);
    const double per_link = load / b.links;
    per_link_max = std::max(per_link_max, per_link);
    pair = std::min(pair, b.link_gbps / per_link);
  }
  // Streams a GPU drives at once: one per peer, at most one per link it has.
  int gpu_links = 1 << 30;
  for (int s = 0; s < g.gpus; ++s) {
    int links = 0;
    for (int v : adj.next[s]) links += adj.bundle.at({s, v})->links;
    gpu_links = std::min(gpu_links, links);
  }
  const int streams = std::min(g.gpus - 1, gpu_links);
  ExpectedGoodput e;
  e.forwarding_index = index;
  e.pair_gbps = pair;
  e.gpu_gbps = pair * streams;
  e.buffer_gbps = e.gpu_gbps * g.gpus / (g.gpus - 1);
  e.how = "alltoall over shortest paths of the link graph (" + g.source + "): edge forwarding index " + num(index) +
          ", " + num(pair) + " GB/s per GPU pair x " + std::to_string(streams) + " streams at once leave each GPU; " +
          "the 1/" + std::to_string(g.gpus) + " of its buffer that stays on the GPU crosses no link: " +
          num(e.buffer_gbps) + " GB/s of buffer";
  return e;
}

std::optional<ExpectedGoodput> expected_allreduce(const LinkGraph& g, std::string* why) {
  auto unknown = [&](const std::string& r) -> std::optional<ExpectedGoodput> {
    if (why) *why = r;
    return std::nullopt;
  };
  if (g.gpus < 2) return unknown("no expected allreduce goodput: fewer than 2 GPUs");
  const Adjacency adj = adjacency(g);
  ExpectedGoodput e;
  if (fully_connected(g, adj)) {
    double slowest = 1e300;
    for (int s = 0; s < g.gpus; ++s) {
      double out = 0;
      for (int v : adj.next[s]) {
        const LinkBundle& b = *adj.bundle.at({s, v});
        out += b.links * b.link_gbps;
      }
      slowest = std::min(slowest, out);
    }
    e.gpu_gbps = e.buffer_gbps = slowest;
    e.how = "allreduce on a fully connected node (" + g.source + "): the sum of a GPU's outgoing links, " + num(slowest) + " GB/s";
    return e;
  }
  if (g.switches > 0) return unknown("no expected allreduce goodput: GPUs on several switches");
  if (g.gpus > kMaxSearchGpus) return unknown("no expected allreduce goodput: too many GPUs to search rings over");
  const Rings rings = edge_disjoint_rings(g, adj);
  if (rings.count == 0) return unknown("no expected allreduce goodput: the link graph has no ring through every GPU");
  // Each ring runs both ways (2x its rate); Rabenseifner moves the buffer twice (/2).
  e.rings = rings.count;
  e.gpu_gbps = e.buffer_gbps = rings.gbps;
  e.how = "allreduce over " + std::to_string(rings.count) + " edge-disjoint rings of the link graph (" + g.source +
          "), both directions, buffer sent twice: " + num(rings.gbps) + " GB/s";
  return e;
}

LinkGraph link_graph_of(const Topology& topo) {
  LinkGraph g;
  const int n = static_cast<int>(topo.gpus.size());
  bool switched = false;
  for (const GpuPair& p : topo.pairs)
    if (p.link == "nvlink" && p.peak_source.find("NVSwitch") != std::string::npos) switched = true;
  if (switched) {
    // Every GPU's links go to the switch: a pair's link count is the GPU's switch links.
    g.gpus = n;
    g.switches = 1;
    for (int i = 0; i < n; ++i) {
      int links = 0;
      double rate = 0;
      for (const GpuPair& p : topo.pairs)
        if (p.src == i && p.link == "nvlink") {
          links = std::max(links, p.nvlink_links);
          rate = p.nvlink_link_gbps;
        }
      if (links > 0) g.bundles.push_back({i, n, links, rate});
    }
    g.source = "NVLink to NVSwitch";
    return g;
  }
  for (const GpuPair& p : topo.pairs)
    if (p.link == "nvlink" && p.src < p.dst) g.bundles.push_back({p.src, p.dst, p.nvlink_links, p.nvlink_link_gbps});
  if (!g.bundles.empty()) {
    g.gpus = n;
    g.source = "NVLink between GPUs";
    return g;
  }
  // AMD: direct xGMI links from the KFD topology (a pair with 0 links is routed, not an edge).
  for (const GpuPair& p : topo.pairs)
    if (p.link == "xgmi" && p.xgmi_links > 0 && p.src < p.dst)
      g.bundles.push_back({p.src, p.dst, p.xgmi_links, p.peak_gbps / p.xgmi_links});
  if (!g.bundles.empty()) {
    g.gpus = n;
    g.source = "xGMI between GPUs";
  }
  return g;
}

ExpectedAnswer expected_goodput_for(const std::string& operation, int ranks, const LinkGraph& g) {
  if (operation != "allreduce" && operation != "alltoall")
    return {std::nullopt, "no expected goodput: the study defines it for allreduce and alltoall only"};
  if (g.gpus == 0) return {std::nullopt, "no expected goodput: the GPUs have no NVLink graph to route over"};
  if (ranks != g.gpus)
    return {std::nullopt, "no expected goodput: " + std::to_string(ranks) + " ranks on a node of " + std::to_string(g.gpus) +
                              " GPUs (the graph answers for one rank per GPU of the node)"};
  std::string why;
  const auto e = operation == "alltoall" ? expected_alltoall(g, &why) : expected_allreduce(g, &why);
  if (!e) return {std::nullopt, why};
  return {e->buffer_gbps, e->how};
}

}  // namespace commatlas
