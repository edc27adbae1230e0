// The probe's fixed half: measures what the CUDA driver answers for one loaded library and prints
// one JSON object per line in the format of tests/data/facts/h200/README.md (team contract 3).
// A generated harness (emu/probe/harness.py) includes the export's own header, loads it the way a
// C++ application does, then calls probe_library_attributes() and probe_library_rest().  Linked with -Wl,--wrap=_cudaLaunchKernelEx so
// that the launches the export's wrapper makes are recorded with the configuration it chose.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <string>
#include <vector>

static std::string g_object = "null", g_sha = "null";     // JSON literals
static long g_emitted = 0, g_skip = 0;                      // replay after a restart: lines to suppress
static std::vector<long> g_bad;                              // launch sequence numbers that poisoned the context
static void *g_buffer = nullptr;                             // 1 GiB of zeros every sweep launch points into
static FILE *g_facts = stdout;                               // facts only: probe_start sends fd 1 (printf) to stderr
static const size_t BUFFER_BYTES = size_t(1) << 30;

static std::string jstr(const char *text) {
  std::string out = "\"";
  for (const char *c = text; c && *c; c++) {
    if (*c == '"' || *c == '\\') { out += '\\'; out += *c; }
    else if ((unsigned char)*c < 0x20) { char hex[8]; snprintf(hex, sizeof hex, "\\u%04x", *c); out += hex; }
    else out += *c;
  }
  return out + "\"";
}

struct Line {
  std::string text;
  explicit Line(const char *kind) { text = "{\"kind\":\"" + std::string(kind) + "\",\"object\":" + g_object + ",\"sha256\":" + g_sha; }
  Line &raw(const char *key, const std::string &json) { text += ",\"" + std::string(key) + "\":" + json; return *this; }
  Line &num(const char *key, long long value) { return raw(key, std::to_string(value)); }
  Line &str(const char *key, const char *value) { return raw(key, value ? jstr(value) : std::string("null")); }
  long emit() {
    long index = g_emitted++;
    if (index >= g_skip) { fprintf(g_facts, "%s}\n", text.c_str()); fflush(g_facts); }
    return index;
  }
};

static bool replaying(long index) { return index < g_skip; }
static bool poisoned(long index) { for (long b : g_bad) if (b == index) return true; return false; }

// An execution error after a launch leaves the context unusable: record it and let the runner restart us.
static void check_execution(long seq) {
  cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaGetLastError();
  if (err != cudaSuccess) {
    Line("execution").num("seq", seq).num("result", err).emit();
    fprintf(stderr, "probe: execution error %d after fact %ld; restart with --bad %ld --skip %ld\n", (int)err, seq, seq, g_emitted);
    exit(3);
  }
}

static void probe_device() {
  std::string attrs = "{";
  for (int a = 1; a < 256; a++) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, (cudaDeviceAttr)a, 0) == cudaSuccess) {
      if (attrs.size() > 1) attrs += ",";
      attrs += "\"" + std::to_string(a) + "\":" + std::to_string(v);
    } else cudaGetLastError();
  }
  attrs += "}";
  char name[256] = {0};
  cuDeviceGetName(name, sizeof name, 0);
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  std::string keep_o = g_object, keep_s = g_sha;
  g_object = "null"; g_sha = "null";
  Line("device").num("device", 0).str("name", name).num("driver", driver).num("runtime", runtime).raw("attributes", attrs).emit();
  g_object = keep_o; g_sha = keep_s;
}

static std::string kernel_name(CUkernel k, const char *fallback) {
  const char *name = nullptr;
  if (k && cuKernelGetName(&name, k) == CUDA_SUCCESS && name) return name;
  return fallback ? fallback : "?";
}

static void probe_attributes(CUkernel k, const char *name) {
  for (int a = 0; a <= 17; a++) {
    int v = 0;
    CUresult r = cuKernelGetAttribute(&v, (CUfunction_attribute)a, k, 0);
    Line line("kernel_attribute");
    line.str("kernel", name).num("device", 0).num("attribute", a).num("result", r);
    if (r == CUDA_SUCCESS) line.num("value", v); else line.raw("value", "null");
    line.emit();
  }
}

static int get_attr(CUkernel k, int a) { int v = 0; cuKernelGetAttribute(&v, (CUfunction_attribute)a, k, 0); return v; }

static void occupancy_one(CUkernel k, const char *name, int block, int smem, const char *carveout) {
  int blocks = -1;
  cudaError_t r = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)k, block, smem);
  if (r != cudaSuccess) cudaGetLastError();
  Line line("occupancy");
  line.str("kernel", name).num("block_size", block).num("dynamic_smem", smem).raw("carveout", carveout).num("result", r);
  if (r == cudaSuccess) line.num("num_blocks", blocks); else line.raw("num_blocks", "null");
  line.emit();
}

static const int SMEM_SIZES[] = {0, 1024, 16384, 49152, 100000, 232448};

static void probe_occupancy(CUkernel k, const char *name) {
  for (int block = 32; block <= 1024; block += 32)
    for (int smem : SMEM_SIZES) occupancy_one(k, name, block, smem, "null");
  int original = get_attr(k, 9);
  const int carveouts[] = {0, 25, 50, 75, 100};
  const int blocks[] = {32, 64, 128, 256, 512, 768, 1024};
  for (int c : carveouts) {
    if (cudaKernelSetAttributeForDevice((cudaKernel_t)k, cudaFuncAttributePreferredSharedMemoryCarveout, c, 0) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    for (int block : blocks)
      for (int smem : SMEM_SIZES) occupancy_one(k, name, block, smem, std::to_string(c).c_str());
  }
  cudaKernelSetAttributeForDevice((cudaKernel_t)k, cudaFuncAttributePreferredSharedMemoryCarveout, original, 0);
  cudaGetLastError();
}

static void setter_one(CUkernel k, const char *name, const char *api, int attr, int value, int device) {
  cudaError_t r;
  if (strcmp(api, "cudaFuncSetAttribute") == 0) r = cudaFuncSetAttribute((const void *)k, (cudaFuncAttribute)attr, value);
  else r = cudaKernelSetAttributeForDevice((cudaKernel_t)k, (cudaFuncAttribute)attr, value, device);
  cudaGetLastError();
  Line("setter").str("kernel", name).str("api", api).num("attribute", attr).num("value", value).num("device", device).num("result", r).emit();
}

// Valid and invalid values of every settable attribute, through both APIs; each attribute is put back after.
static void probe_setters(CUkernel k, const char *name) {
  int optin = 0; cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  int statics = get_attr(k, 1);
  struct { int attr; std::vector<int> values; } tries[] = {
    {8, {0, 1024, 49152, optin - statics, optin - statics + 1, optin, optin + 1, 300000, -1}},
    {9, {-2, -1, 0, 1, 25, 50, 99, 100, 101, 1000}},
    {10, {0, 1, 2, -1}},
    {11, {0, 1, 2, 3, 8, 16, 17, -1}},
    {12, {0, 1, 2, 3, 8, 16, 17, -1}},
    {13, {0, 1, 2, 3, 8, 16, 17, -1}},
    {14, {0, 1, 2, -1}},
    {15, {0, 1, 2, 3, 4, -1}},
    {0, {1024}}, {4, {10}}, {16, {0}}, {17, {0}}, {18, {0}}, {99, {0}},
  };
  const char *apis[] = {"cudaKernelSetAttributeForDevice", "cudaFuncSetAttribute"};
  for (auto &t : tries) {
    int original = get_attr(k, t.attr);
    for (const char *api : apis)
      for (int v : t.values) {
        setter_one(k, name, api, t.attr, v, 0);
        cudaKernelSetAttributeForDevice((cudaKernel_t)k, (cudaFuncAttribute)t.attr, original, 0);
        cudaGetLastError();
      }
  }
  setter_one(k, name, "cudaKernelSetAttributeForDevice", 9, 25, 1);
  setter_one(k, name, "cudaKernelSetAttributeForDevice", 9, 25, -1);
}

// ---- launches ----------------------------------------------------------------------------------------
struct Attr { int id; int v[3]; int n; };     // n = 1 scalar, 3 = dim3

struct Launch {
  unsigned grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
  size_t smem = 0;
  std::vector<Attr> attrs;
  std::vector<std::pair<int, int>> pre;      // kernel attributes set (for device 0) before, restored after
};

// How the export launches each kernel: the configurations its wrapper chose (recorded by the
// --wrap hook below) or, for a TVM-FFI object, those emu's trace of its entry recorded (the generated
// harness passes them to probe_traced_launch).  A DSL kernel may need dynamic shared memory (`rotate`
// needs 512 bytes for its 128 threads, and faults with less): sweep launches that do not test shared
// memory get what the export gave the kernel, scaled to the block's threads; kernels it did not launch
// get none.  The cluster occupancy sweep starts from each launch made with a cluster.
struct Launched { CUkernel kernel; unsigned grid[3], block[3]; size_t smem; bool clustered; unsigned cluster[3]; };
static std::vector<Launched> g_launched;
static size_t g_smem_bytes = 0, g_smem_threads = 1;

static void note_launch(CUkernel k, const cudaLaunchConfig_t &c) {
  Launched l = {k, {c.gridDim.x, c.gridDim.y, c.gridDim.z}, {c.blockDim.x, c.blockDim.y, c.blockDim.z}, c.dynamicSmemBytes, false, {0, 0, 0}};
  for (unsigned i = 0; i < c.numAttrs; i++)
    if (c.attrs[i].id == cudaLaunchAttributeClusterDimension) {
      l.clustered = true;
      l.cluster[0] = c.attrs[i].val.clusterDim.x; l.cluster[1] = c.attrs[i].val.clusterDim.y; l.cluster[2] = c.attrs[i].val.clusterDim.z;
    }
  g_launched.push_back(l);
}

// A launch emu's trace of a TVM-FFI entry recorded (emu/probe/tvm_ffi.py writes the calls): as if the export made it.
static void probe_traced_launch(cudaLibrary_t lib, const char *name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, size_t smem, int clustered, unsigned cx, unsigned cy, unsigned cz) {
  cudaKernel_t k = nullptr;
  if (!lib || cudaLibraryGetKernel(&k, lib, name) != cudaSuccess || !k) { cudaGetLastError(); return; }
  Launched l = {(CUkernel)k, {gx, gy, gz}, {bx, by, bz}, smem, clustered != 0, {cx, cy, cz}};
  g_launched.push_back(l);
}
static const size_t AUTO_SMEM = ~(size_t)0;

static Launch cfg(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, size_t smem = AUTO_SMEM) {
  Launch l; l.grid[0] = gx; l.grid[1] = gy; l.grid[2] = gz; l.block[0] = bx; l.block[1] = by; l.block[2] = bz;
  size_t threads = (size_t)bx * by * bz;
  l.smem = smem != AUTO_SMEM ? smem : (threads * g_smem_bytes + g_smem_threads - 1) / g_smem_threads;
  return l;
}
static Launch &with(Launch &l, int id, int value) { l.attrs.push_back({id, {value, 0, 0}, 1}); return l; }
static Launch &with3(Launch &l, int id, int x, int y, int z) { l.attrs.push_back({id, {x, y, z}, 3}); return l; }

static std::string config_json(const cudaLaunchConfig_t &c) {
  char head[200];
  snprintf(head, sizeof head, "{\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"dynamic_smem\":%zu,\"attrs\":[",
           c.gridDim.x, c.gridDim.y, c.gridDim.z, c.blockDim.x, c.blockDim.y, c.blockDim.z, c.dynamicSmemBytes);
  std::string out = head;
  for (unsigned i = 0; i < c.numAttrs; i++) {
    const cudaLaunchAttribute &a = c.attrs[i];
    char item[160];
    switch ((int)a.id) {
      case cudaLaunchAttributeClusterDimension:
        snprintf(item, sizeof item, "{\"id\":%d,\"value\":[%u,%u,%u]}", (int)a.id, a.val.clusterDim.x, a.val.clusterDim.y, a.val.clusterDim.z); break;
      case cudaLaunchAttributePreferredClusterDimension:
        snprintf(item, sizeof item, "{\"id\":%d,\"value\":[%u,%u,%u]}", (int)a.id, a.val.preferredClusterDim.x, a.val.preferredClusterDim.y, a.val.preferredClusterDim.z); break;
      case cudaLaunchAttributeProgrammaticEvent:
        snprintf(item, sizeof item, "{\"id\":%d,\"value\":[%d,%d,%d]}", (int)a.id, a.val.programmaticEvent.event != nullptr,
                 a.val.programmaticEvent.flags, a.val.programmaticEvent.triggerAtBlockStart); break;
      case cudaLaunchAttributeLaunchCompletionEvent:
        snprintf(item, sizeof item, "{\"id\":%d,\"value\":[%d,%d,0]}", (int)a.id, a.val.launchCompletionEvent.event != nullptr,
                 a.val.launchCompletionEvent.flags); break;
      default: {
        int scalar; memcpy(&scalar, &a.val, sizeof scalar);
        snprintf(item, sizeof item, "{\"id\":%d,\"value\":%d}", (int)a.id, scalar);
      }
    }
    out += (i ? "," : "") + std::string(item);
  }
  return out + "]}";
}

static std::string pre_json(const std::vector<std::pair<int, int>> &pre) {
  std::string out = "{";
  for (size_t i = 0; i < pre.size(); i++) out += (i ? ",\"" : "\"") + std::to_string(pre[i].first) + "\":" + std::to_string(pre[i].second);
  return out + "}";
}

// Every parameter of 8 bytes gets the zeroed buffer's address, anything else zeros.
struct Params {
  std::vector<uint64_t> storage;
  std::vector<void *> pointers;
  explicit Params(CUkernel k) {
    size_t offset = 0, size = 0;
    std::vector<std::pair<size_t, size_t>> params;
    for (size_t i = 0; i < 64 && cuKernelGetParamInfo(k, i, &offset, &size) == CUDA_SUCCESS; i++) params.push_back({offset, size});
    storage.assign(params.size() * 64 + 1, 0);
    size_t slot = 0;
    for (auto &p : params) {
      uint64_t *at = &storage[slot];
      if (p.second == 8) *at = (uint64_t)(uintptr_t)g_buffer;
      pointers.push_back(at);
      slot += (p.second + 7) / 8;
    }
  }
};

static cudaEvent_t g_event = nullptr;

// One launch through cudaLaunchKernelEx on the kernel handle; returns its result (replayed ones: 0, poisoned: -1).
static int launch_one(CUkernel k, const char *name, Launch l) {
  std::vector<int> originals;
  for (auto &p : l.pre) {
    originals.push_back(get_attr(k, p.first));
    cudaError_t r = cudaKernelSetAttributeForDevice((cudaKernel_t)k, (cudaFuncAttribute)p.first, p.second, 0);
    if (r != cudaSuccess) { cudaGetLastError(); setter_one(k, name, "cudaKernelSetAttributeForDevice", p.first, p.second, 0); return -2; }
  }
  std::vector<cudaLaunchAttribute> attrs(l.attrs.size());
  for (size_t i = 0; i < l.attrs.size(); i++) {
    memset(&attrs[i], 0, sizeof attrs[i]);
    attrs[i].id = (cudaLaunchAttributeID)l.attrs[i].id;
    const Attr &a = l.attrs[i];
    if (a.id == cudaLaunchAttributeProgrammaticEvent) {
      attrs[i].val.programmaticEvent.event = a.v[0] ? g_event : nullptr;
      attrs[i].val.programmaticEvent.flags = a.v[1];
      attrs[i].val.programmaticEvent.triggerAtBlockStart = a.v[2];
    } else if (a.id == cudaLaunchAttributeLaunchCompletionEvent) {
      attrs[i].val.launchCompletionEvent.event = a.v[0] ? g_event : nullptr;
      attrs[i].val.launchCompletionEvent.flags = a.v[1];
    } else if (a.n == 3) {
      attrs[i].val.clusterDim.x = a.v[0]; attrs[i].val.clusterDim.y = a.v[1]; attrs[i].val.clusterDim.z = a.v[2];
    } else {
      memcpy(&attrs[i].val, &a.v[0], sizeof(int));
    }
  }
  cudaLaunchConfig_t c;
  memset(&c, 0, sizeof c);
  c.gridDim = dim3(l.grid[0], l.grid[1], l.grid[2]);
  c.blockDim = dim3(l.block[0], l.block[1], l.block[2]);
  c.dynamicSmemBytes = l.smem;
  c.stream = 0;
  c.attrs = attrs.data();
  c.numAttrs = (unsigned)attrs.size();
  Line line("launch");
  line.str("kernel", name).str("via", "cudaLaunchKernelEx").raw("config", config_json(c)).raw("pre", pre_json(l.pre));
  long seq = g_emitted;
  int result;
  if (replaying(seq) && poisoned(seq)) { result = -1; line.num("result", -1).emit(); g_emitted++; }   // + its execution line
  else {
    Params params(k);
    cudaError_t r = cudaLaunchKernelExC(&c, (const void *)k, params.pointers.data());
    cudaError_t last = cudaGetLastError();
    (void)last;
    result = r;
    line.num("result", r).emit();
    if (r == cudaSuccess) check_execution(seq);
  }
  for (size_t i = 0; i < l.pre.size(); i++) {
    cudaKernelSetAttributeForDevice((cudaKernel_t)k, (cudaFuncAttribute)l.pre[i].first, originals[i], 0);
    cudaGetLastError();
  }
  return result;
}

static Launch pre(Launch l, int attr, int value) { l.pre.push_back({attr, value}); return l; }

// Largest cooperative grid (x only) that launches, by binary search; the launches are all recorded.
// Shared memory above attribute 8 gets attribute 8 raised first (`pre`), so the search measures co-residency.
static void cooperative_search(CUkernel k, const char *name, unsigned block, size_t smem) {
  unsigned lo = 0, hi = 132 * 64 + 1;       // lo launches (0 = none yet), hi does not (or untested bound)
  int attr8 = get_attr(k, 8), optin = 0, statics = get_attr(k, 1);
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  Launch base = cfg(hi, 1, 1, block, 1, 1, smem);
  if (smem > (size_t)attr8) base.pre.push_back({8, optin - statics});
  with(base, cudaLaunchAttributeCooperative, 1);
  if (launch_one(k, name, base) == 0) return;
  while (hi - lo > 1) {
    unsigned mid = lo + (hi - lo) / 2;
    Launch l = base; l.grid[0] = mid;
    if (launch_one(k, name, l) == 0) lo = mid; else hi = mid;
  }
}

// The launch-configuration sweep: limits of grid, block, cluster, cooperative size, shared memory, attributes.
static void probe_launch_sweep(CUkernel k, const char *name) {
  g_smem_bytes = 0; g_smem_threads = 1;
  for (auto &w : g_launched) {
    size_t threads = (size_t)w.block[0] * w.block[1] * w.block[2];
    if (w.kernel == k && threads) { g_smem_bytes = w.smem; g_smem_threads = threads; }
  }
  int max_threads = get_attr(k, 0), statics = get_attr(k, 1), attr8 = get_attr(k, 8);
  int optin = 0; cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  // block and grid shapes
  unsigned blocks[][3] = {{1, 1, 1}, {32, 1, 1}, {128, 1, 1}, {1024, 1, 1}, {1025, 1, 1}, {2048, 1, 1}, {1, 1024, 1}, {1, 1025, 1},
                          {32, 32, 1}, {32, 33, 1}, {1, 1, 64}, {1, 1, 65}, {16, 1, 64}, {16, 1, 65}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}};
  for (auto &b : blocks) launch_one(k, name, cfg(1, 1, 1, b[0], b[1], b[2]));
  unsigned mt = (unsigned)max_threads;
  for (unsigned b : {mt - 32, mt - 1, mt, mt + 1, mt + 32}) launch_one(k, name, cfg(1, 1, 1, b, 1, 1));
  unsigned grids[][3] = {{0, 1, 1}, {1, 0, 1}, {1, 1, 0}, {65535, 1, 1}, {65536, 1, 1}, {1u << 20, 1, 1}, {2147483647u, 1, 1},
                         {2147483648u, 1, 1}, {1, 65535, 1}, {1, 65536, 1}, {1, 1, 65535}, {1, 1, 65536}, {2, 65535, 2}};
  for (auto &g : grids) {
    if (g[0] == 2147483647u) continue;       // legal but slow to run: only its neighbour above is tried
    launch_one(k, name, cfg(g[0], g[1], g[2], 32, 1, 1));
  }
  // dynamic shared memory against attribute 8 and the device opt-in
  for (size_t s : {(size_t)0, (size_t)48 * 1024, (size_t)48 * 1024 + 1, (size_t)attr8, (size_t)attr8 + 1, (size_t)(optin - statics),
                   (size_t)(optin - statics + 1), (size_t)optin, (size_t)optin + 1, (size_t)1 << 20})
    launch_one(k, name, cfg(1, 1, 1, 128, 1, 1, s));
  for (int a8 : {0, 1024, 49152, optin - statics}) {
    for (size_t s : {(size_t)a8, (size_t)a8 + 1, (size_t)48 * 1024, (size_t)48 * 1024 + 1})
      launch_one(k, name, pre(cfg(1, 1, 1, 128, 1, 1, s), 8, a8));
  }
  // clusters: sizes 1..16 along x, y, z, grid multiples and not, with and without non-portable sizes allowed
  for (int np : {0, 1}) {
    for (int c = 1; c <= 17; c++) {
      for (unsigned g : {(unsigned)c, (unsigned)c * 4, (unsigned)c * 4 + 1, (unsigned)c * 132}) {
        if (c == 1 && g != 1 && g != 4) continue;
        Launch l = pre(cfg(g, 1, 1, 128, 1, 1), 14, np); with3(l, cudaLaunchAttributeClusterDimension, c, 1, 1); launch_one(k, name, l);
      }
    }
    int shapes[][3] = {{1, 2, 1}, {1, 1, 2}, {2, 2, 1}, {2, 2, 2}, {4, 2, 1}, {2, 4, 1}, {4, 4, 1}, {8, 2, 1}, {2, 2, 4}, {3, 3, 1},
                       {4, 4, 2}, {16, 1, 1}, {1, 16, 1}, {1, 1, 16}, {0, 1, 1}, {1, 0, 1}, {2, 1, 0}};
    for (auto &s : shapes) {
      for (int mult : {1, 2}) {
        Launch l = pre(cfg(s[0] ? s[0] * mult : 1, s[1] ? s[1] * mult : 1, s[2] ? s[2] * mult : 1, 32, 1, 1), 14, np);
        with3(l, cudaLaunchAttributeClusterDimension, s[0], s[1], s[2]); launch_one(k, name, l);
      }
      Launch odd = pre(cfg(s[0] + 1, s[1] + 1, s[2] + 1, 32, 1, 1), 14, np);
      with3(odd, cudaLaunchAttributeClusterDimension, s[0], s[1], s[2]); launch_one(k, name, odd);
    }
    // clusters with large blocks and large shared memory: can a cluster of that many blocks be co-scheduled
    for (int c : {2, 4, 8, 16}) {
      for (size_t s : {(size_t)0, (size_t)100000, (size_t)(optin - statics)}) {
        for (unsigned b : {128u, 1024u}) {
          Launch l = pre(cfg(c, 1, 1, b, 1, 1, s ? s : AUTO_SMEM), 14, np);
          l.pre.push_back({8, optin - statics});
          with3(l, cudaLaunchAttributeClusterDimension, c, 1, 1); launch_one(k, name, l);
        }
      }
    }
  }
  // required cluster dimensions set through attributes 11-13 (10 is read-only on this driver: setters answer 1)
  int req[][3] = {{2, 1, 1}, {4, 1, 1}, {2, 2, 1}, {8, 1, 1}, {16, 1, 1}, {3, 1, 1}};
  for (auto &r : req) {
    for (int np : {0, 1}) {
      Launch base = cfg(4 * r[0], r[1], r[2], 128, 1, 1);
      base.pre = {{14, np}, {11, r[0]}, {12, r[1]}, {13, r[2]}};
      launch_one(k, name, base);
      Launch same = base; with3(same, cudaLaunchAttributeClusterDimension, r[0], r[1], r[2]); launch_one(k, name, same);
      Launch other = base; with3(other, cudaLaunchAttributeClusterDimension, 1, 1, 1); launch_one(k, name, other);
      Launch bigger = base; with3(bigger, cudaLaunchAttributeClusterDimension, 2 * r[0], r[1], r[2]); launch_one(k, name, bigger);
      Launch odd = base; odd.grid[0] = 4 * r[0] + 1; launch_one(k, name, odd);
      Launch coop = base; with(coop, cudaLaunchAttributeCooperative, 1); launch_one(k, name, coop);
    }
  }
  // cooperative: largest grid per block size and shared memory
  for (unsigned b : {32u, 64u, 128u, 256u, 512u, 1024u}) {
    if ((int)b > max_threads) continue;
    cooperative_search(k, name, b, cfg(1, 1, 1, b, 1, 1).smem);
  }
  for (size_t s : {(size_t)49152, (size_t)100000, (size_t)(optin - statics)}) cooperative_search(k, name, 128, s);
  for (int v : {0, 1, 2, -1}) { Launch l = cfg(4, 1, 1, 128, 1, 1); with(l, cudaLaunchAttributeCooperative, v); launch_one(k, name, l); }
  { Launch l = cfg(132, 2, 1, 128, 1, 1); with(l, cudaLaunchAttributeCooperative, 1); launch_one(k, name, l); }
  { Launch l = cfg(66, 1, 2, 128, 1, 1); with(l, cudaLaunchAttributeCooperative, 1); launch_one(k, name, l); }
  // cooperative + cluster
  for (unsigned g : {2u, 8u, 132u, 264u, 1056u}) {
    Launch l = cfg(g, 1, 1, 128, 1, 1); with(l, cudaLaunchAttributeCooperative, 1); with3(l, cudaLaunchAttributeClusterDimension, 2, 1, 1);
    launch_one(k, name, l);
  }
  // PDL (6), programmatic event (7), scheduling policy (5), priority (8), preferred cluster (11), carveout (14)
  for (int v : {0, 1, 2, -1}) { Launch l = cfg(4, 1, 1, 128, 1, 1); with(l, cudaLaunchAttributeProgrammaticStreamSerialization, v); launch_one(k, name, l); }
  int events[][3] = {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {1, 2, 0}, {1, 1, 0}};
  for (auto &e : events) { Launch l = cfg(4, 1, 1, 128, 1, 1); with3(l, cudaLaunchAttributeProgrammaticEvent, e[0], e[1], e[2]); launch_one(k, name, l); }
  for (int v : {0, 1, 2, 3, 4, -1}) {
    Launch l = cfg(4, 1, 1, 128, 1, 1); with(l, cudaLaunchAttributeClusterSchedulingPolicyPreference, v); launch_one(k, name, l);
    Launch lc = pre(cfg(4, 1, 1, 128, 1, 1), 14, 1); with(lc, cudaLaunchAttributeClusterSchedulingPolicyPreference, v);
    with3(lc, cudaLaunchAttributeClusterDimension, 2, 1, 1); launch_one(k, name, lc);
  }
  for (int v : {-100, -6, -5, -1, 0, 1, 5, 100}) { Launch l = cfg(4, 1, 1, 128, 1, 1); with(l, cudaLaunchAttributePriority, v); launch_one(k, name, l); }
  int prefs[][3] = {{2, 1, 1}, {4, 1, 1}, {8, 1, 1}, {16, 1, 1}, {3, 1, 1}, {1, 1, 1}};
  for (auto &p : prefs) {
    Launch alone = pre(cfg(16, 1, 1, 128, 1, 1), 14, 1); with3(alone, cudaLaunchAttributePreferredClusterDimension, p[0], p[1], p[2]); launch_one(k, name, alone);
    Launch both = pre(cfg(16, 1, 1, 128, 1, 1), 14, 1); with3(both, cudaLaunchAttributeClusterDimension, 2, 1, 1);
    with3(both, cudaLaunchAttributePreferredClusterDimension, p[0], p[1], p[2]); launch_one(k, name, both);
  }
  for (int v = -2; v <= 102; v++) { Launch l = cfg(4, 1, 1, 128, 1, 1); with(l, cudaLaunchAttributePreferredSharedMemoryCarveout, v); launch_one(k, name, l); }
  for (int v : {0, 1}) { Launch l = cfg(4, 1, 1, 128, 1, 1); with3(l, cudaLaunchAttributeLaunchCompletionEvent, 1, v, 0); launch_one(k, name, l); }
  // attribute ids the runtime may not know, and an attribute given twice
  for (int id : {0, 1, 3, 9, 10, 13, 15, 16, 99}) { Launch l = cfg(4, 1, 1, 128, 1, 1); with(l, id, 0); launch_one(k, name, l); }
  { Launch l = pre(cfg(8, 1, 1, 128, 1, 1), 14, 1); with3(l, cudaLaunchAttributeClusterDimension, 2, 1, 1); with3(l, cudaLaunchAttributeClusterDimension, 4, 1, 1); launch_one(k, name, l); }
}

// ---- cluster occupancy ----------------------------------------------------------------------------------
// cudaOccupancyMaxActiveClusters for every kernel the export launches with a cluster, and every kernel
// with a compile-time cluster (attributes 11-13): first each configuration as launched, then from it a
// small sweep of cluster shapes, dynamic shared memory and block sizes (the grid then the cluster's own
// shape, a multiple of it), and once with no cluster attribute.  Attributes stay as loaded (14: non-portable
// sizes allowed or not).  A config without attribute 4 leaves the cluster to the kernel.
static void cluster_one(CUkernel k, const char *name, const unsigned grid[3], const unsigned block[3], size_t smem, const unsigned *cluster) {
  cudaLaunchAttribute attr{};
  cudaLaunchConfig_t c{};
  c.gridDim = dim3(grid[0], grid[1], grid[2]);
  c.blockDim = dim3(block[0], block[1], block[2]);
  c.dynamicSmemBytes = smem;
  if (cluster) {
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cluster[0]; attr.val.clusterDim.y = cluster[1]; attr.val.clusterDim.z = cluster[2];
    c.attrs = &attr;
    c.numAttrs = 1;
  }
  int clusters = -1;
  cudaError_t r = cudaOccupancyMaxActiveClusters(&clusters, (const void *)k, &c);
  if (r != cudaSuccess) cudaGetLastError();
  Line line("cluster_occupancy");
  line.str("kernel", name).raw("config", config_json(c)).num("result", r);
  if (r == cudaSuccess) line.num("num_clusters", clusters); else line.raw("num_clusters", "null");
  line.emit();
}

static void cluster_sweep(CUkernel k, const char *name, const Launched &base) {
  const unsigned *own = base.clustered ? base.cluster : nullptr;
  unsigned shape_grid[3] = {1, 1, 1};
  for (int i = 0; i < 3; i++) shape_grid[i] = base.clustered && base.cluster[i] ? base.cluster[i] : base.grid[i];
  cluster_one(k, name, base.grid, base.block, base.smem, own);
  unsigned shapes[][3] = {{1, 1, 1}, {2, 1, 1}, {4, 1, 1}, {8, 1, 1}, {16, 1, 1}, {1, 2, 1}, {2, 2, 1}, {4, 2, 1}, {2, 1, 2}};
  for (auto &s : shapes) {
    if (own && !memcmp(own, s, sizeof s)) continue;
    cluster_one(k, name, s, base.block, base.smem, s);
  }
  int attr8 = get_attr(k, 8);
  for (size_t smem : {(size_t)0, (size_t)1024, (size_t)49152, (size_t)100000, (size_t)attr8, (size_t)attr8 + 1})
    if (smem != base.smem) cluster_one(k, name, shape_grid, base.block, smem, own);
  for (unsigned threads : {32u, 64u, 128u, 256u, 384u, 512u, 1024u}) {
    unsigned block[3] = {threads, 1, 1};
    if (memcmp(block, base.block, sizeof block)) cluster_one(k, name, shape_grid, block, base.smem, own);
  }
  if (own) cluster_one(k, name, shape_grid, base.block, base.smem, nullptr);
}

static void probe_cluster_occupancy(CUkernel k, const char *name) {
  std::vector<Launched> bases;
  for (auto &l : g_launched) {
    if (l.kernel != k || !l.clustered) continue;
    bool seen = false;
    for (auto &b : bases) seen |= !memcmp(b.block, l.block, sizeof l.block) && b.smem == l.smem && !memcmp(b.cluster, l.cluster, sizeof l.cluster);
    if (!seen) bases.push_back(l);
  }
  unsigned required[3] = {(unsigned)get_attr(k, 11), (unsigned)get_attr(k, 12), (unsigned)get_attr(k, 13)};
  if (bases.empty() && required[0] && required[1] && required[2]) {
    unsigned threads = get_attr(k, 0) < 128 ? (unsigned)get_attr(k, 0) : 128u;
    Launched l = {k, {required[0], required[1], required[2]}, {threads, 1, 1}, 0, false, {0, 0, 0}};
    bases.push_back(l);
  }
  for (auto &b : bases) cluster_sweep(k, name, b);
}

// Phase 1, right after the load: every kernel the object names (its kernels_kernel_* slots), then any
// other kernel the library holds, with its attributes.  Phase 2 runs after the wrapper's launch.
struct Probed { CUkernel kernel; std::string name; };

static std::vector<Probed> probe_library_attributes(cudaLibrary_t lib, const char *const *names, int count) {
  std::vector<Probed> kernels;
  for (int i = 0; i < count; i++) {
    cudaKernel_t k = nullptr;
    cudaError_t r = cudaLibraryGetKernel(&k, lib, names[i]);
    cudaGetLastError();
    Line("get_kernel").str("kernel", names[i]).num("result", r).emit();
    kernels.push_back({(CUkernel)k, kernel_name((CUkernel)k, names[i])});
  }
  unsigned n = 0;
  if (lib && cuLibraryGetKernelCount(&n, (CUlibrary)lib) == CUDA_SUCCESS && n) {
    std::vector<CUkernel> all(n);
    if (cuLibraryEnumerateKernels(all.data(), n, (CUlibrary)lib) == CUDA_SUCCESS)
      for (CUkernel k : all) {
        bool known = false;
        for (auto &s : kernels) known |= (s.kernel == k);
        if (!known) kernels.push_back({k, kernel_name(k, "?")});
      }
  }
  for (auto &k : kernels) probe_attributes(k.kernel, k.name.c_str());
  return kernels;
}

static void probe_library_rest(const std::vector<Probed> &kernels, bool sweep) {
  for (auto &k : kernels) {
    if (!k.kernel) continue;
    probe_occupancy(k.kernel, k.name.c_str());
    probe_cluster_occupancy(k.kernel, k.name.c_str());
    if (sweep) probe_launch_sweep(k.kernel, k.name.c_str());
    probe_setters(k.kernel, k.name.c_str());
  }
}

// ---- the export's wrapper (only where an export is linked: PROBE_EXPORT) ---------------------------------
#ifdef PROBE_EXPORT
extern "C" cudaError_t __real__cudaLaunchKernelEx(const cudaLaunchConfig_t *config, const void *func, void **args);
extern "C" cudaError_t __wrap__cudaLaunchKernelEx(const cudaLaunchConfig_t *config, const void *func, void **args) {
  long seq = g_emitted;
  bool skip = replaying(seq) && poisoned(seq);
  cudaError_t r = skip ? cudaErrorLaunchFailure : __real__cudaLaunchKernelEx(config, func, args);
  std::string name = kernel_name((CUkernel)func, "?");
  note_launch((CUkernel)func, *config);
  if (skip) { g_emitted += 2; return r; }
  Line("launch").str("kernel", name.c_str()).str("via", "wrapper").raw("config", config_json(*config)).raw("pre", "{}").num("result", r).emit();
  if (r == cudaSuccess) check_execution(seq);
  else cudaGetLastError();
  return r;
}

#endif

static void *probe_alloc(size_t bytes) {
  void *p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) { cudaGetLastError(); return nullptr; }
  cudaMemset(p, 0, bytes);
  return p;
}

// Kernels and host code may printf (a tensor, a barrier message): keep fd 1 for facts alone.
static void probe_start(int argc, char **argv, const char *object, const char *sha) {
  fflush(stdout);
  int facts_fd = dup(1);
  if (facts_fd >= 0 && (g_facts = fdopen(facts_fd, "w")) != nullptr) dup2(2, 1);
  else g_facts = stdout;
  g_object = object ? jstr(object) : "null";
  g_sha = sha ? jstr(sha) : "null";
  for (int i = 1; i + 1 < argc; i++) {
    if (!strcmp(argv[i], "--skip")) g_skip = atol(argv[i + 1]);
    if (!strcmp(argv[i], "--bad")) g_bad.push_back(atol(argv[i + 1]));
  }
  cudaFree(0);
  g_buffer = probe_alloc(BUFFER_BYTES);
  cudaEventCreateWithFlags(&g_event, cudaEventDisableTiming);
}
