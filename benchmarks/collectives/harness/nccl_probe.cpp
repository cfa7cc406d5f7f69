// The NCCL choice probe (see nccl_probe.hpp).
#include "nccl_probe.hpp"

#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "catalogue.hpp"
#include "collective_math.hpp"
#include "nccl_call.hpp"
#include "nccl_check.hpp"
#include "nccl_choice.hpp"
#include "nvls.hpp"
#include "world.hpp"

namespace triaudit {

// The probe child (--nccl-choice-probe=FILE, started by the parent with NCCL's debug log on):
// one collective per (algorithm, type, size) of the catalogue, up to 1 GiB, each followed by
// reading what NCCL logged for it. Writes "<algo> <type> <bytes> <Algo>/<Proto>" lines.
int run_choice_probe(const std::string& out_path) {
  const char* log_path = std::getenv("NCCL_DEBUG_FILE");
  if (log_path == nullptr) return 2;
  CollectiveWorld::create_single_process(static_cast<int>(g_opt.gpus));
  CollectiveWorld& w = CollectiveWorld::get();
  auto& ranks = w.local();
  const std::uint64_t cap = std::min<std::uint64_t>(g_opt.max_bytes, 1ULL << 30);
  // Every collective's send and receive buffers fit in `cap` bytes each for sizes up to `cap`
  // (the size names the larger of the two).
  std::vector<DeviceBuffer<unsigned char>> sends, recvs;
  for (auto& r : ranks) {
    TRIAUDIT_CUDA(cudaSetDevice(r.device));
    sends.emplace_back(cap);
    recvs.emplace_back(cap);
    TRIAUDIT_CUDA(cudaMemset(sends.back().data(), 0, cap));
  }
  const CollectiveSpec& coll = the_collective();
  const int nranks = w.info().ranks;
  // NCCL refuses NCCL_ALGO=NVLS where it has no NVLS: those cases are skipped, not probed.
  NvlsFacts nvls;
  nvls.collective = coll.name;
  nvls.collective_has_nvls = coll.has_nvls;
  nvls.ranks = nranks;
  nvls.nvls_enable = std::getenv("NCCL_NVLS_ENABLE");
  nvls.multicast_supported = w.multicast_supported(&nvls.device_without_multicast, &nvls.unknown_why);
  const bool nvls_offered = nvls_unavailable_reason(nvls).empty();
  std::string out;
  std::size_t seen = 0;
  auto new_log = [&] {
    std::FILE* f = std::fopen(log_path, "rb");
    std::string text;
    if (f) {
      std::fseek(f, static_cast<long>(seen), SEEK_SET);
      char chunk[4096];
      std::size_t got = 0;
      while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0) text.append(chunk, got);
      std::fclose(f);
    }
    seen += text.size();
    return text;
  };
  for (const CaseSpec& c : catalogue()) {
    if (c.mode == "scaling" || c.gpus != 0 || c.bytes > cap || (c.algo == "nvls" && !nvls_offered)) continue;
    const std::string key = nccl_choice_key(c.algo, c.type->name, c.bytes);
    if (out.find(key + " ") != std::string::npos) continue;  // in-place/graph: the same choice
    const BufferCounts n = coll.counts(c.bytes / static_cast<std::uint64_t>(c.type->bytes), c.type->bytes, nranks);
    if (n.param == 0 || (coll.has_root && g_opt.root >= nranks)) continue;  // the case is skipped
    const std::vector<ncclComm_t>& comms = w.comms(c.algo);
    (void)new_log();  // skip what communicator creation logged
    TRIAUDIT_NCCL(ncclGroupStart());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      NcclCallArgs a;
      a.send = sends[i].data();
      a.recv = recvs[i].data();
      a.count = n.param;
      a.type = c.type->nccl;
      a.elem_bytes = c.type->bytes;
      a.root = static_cast<int>(g_opt.root);
      a.ranks = nranks;
      a.comm = comms[i];
      a.stream = *ranks[i].stream;
      coll.enqueue(a);
    }
    TRIAUDIT_NCCL(ncclGroupEnd());
    for (auto& r : ranks) TRIAUDIT_CUDA(cudaStreamSynchronize(*r.stream));
    const std::vector<NcclChoice> choices = parse_nccl_tuning(new_log());
    if (!choices.empty())
      out +=
          format_nccl_choice(c.algo, c.type->name, c.bytes, choices.front().algorithm + "/" + choices.front().protocol);
  }
  std::FILE* f = std::fopen(out_path.c_str(), "w");
  if (f == nullptr) return 1;
  std::fputs(out.c_str(), f);
  std::fclose(f);
  return 0;
}

// The parent's side: run this executable again as the probe, with NCCL's debug log in a temporary
// file, and keep its answers for the labels. Never fails the run: a probe that finds nothing says
// so in the labels.
void probe_nccl_choices(const char* self, int argc, char** argv) {
  if (g_opt.record_choice != "on") {
    set_nccl_choices({}, "NCCL's choice not recorded (--record-choice=off)");
    return;
  }
  char dir_template[] = "/tmp/triaudit-nccl-probe-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    set_nccl_choices({}, "NCCL's choice not recorded (no temporary folder)");
    return;
  }
  const std::string log = std::string(dir) + "/nccl.log", answers = std::string(dir) + "/choices.txt";
  // At most 5 minutes (timeout(1) where it exists): a probe whose NCCL setup hangs must not hold
  // the measurement back forever.
  const bool have_timeout = std::system("command -v timeout > /dev/null 2>&1") == 0;
  std::string cmd = std::string(have_timeout ? "timeout -k 10 300 " : "") +
                    "env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE='" + log + "' '" + self + "'";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--benchmark_", 0) == 0) continue;
    std::string quoted;
    for (char ch : a) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    cmd += " '" + quoted + "'";
  }
  cmd += " '--nccl-choice-probe=" + answers + "' > '" + std::string(dir) + "/probe.out' 2>&1";
  const int rc = std::system(cmd.c_str());
  std::string text;
  if (std::FILE* f = std::fopen(answers.c_str(), "r")) {
    char chunk[4096];
    std::size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0) text.append(chunk, got);
    std::fclose(f);
  }
  NcclChoices choices = read_nccl_choices(text);
  const std::string why = choices.empty() ? "NCCL's choice not recorded (the probe run, exit " + std::to_string(rc) +
                                                ", logged no NCCL_DEBUG_SUBSYS=TUNING line)"
                                          : "NCCL's choice not recorded for this size (the probe stops at 1 GiB)";
  benchmark::AddCustomContext("nccl_choice_probe",
                              choices.empty() ? why : std::to_string(choices.size()) + " choices recorded");
  set_nccl_choices(std::move(choices), why);
  std::remove(log.c_str());
  std::remove(answers.c_str());
  std::remove((std::string(dir) + "/probe.out").c_str());
  rmdir(dir);
}

}  // namespace triaudit
