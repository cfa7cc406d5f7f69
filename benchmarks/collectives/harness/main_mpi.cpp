// triaudit_<collective>_mpi: one rank per process and GPU, under mpirun or srun. Bootstraps MPI,
// maps ranks onto GPUs (refusing two ranks on one GPU), shares NCCL's unique ids, then runs the
// suite on every rank with rank 0 reporting.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "catalogue.hpp"
#include "collective_math.hpp"
#include "nccl_choice.hpp"
#include "world.hpp"

namespace {
// A short, printable digest of a unique id: equal on every rank when the broadcast worked.
std::string fingerprint(const ncclUniqueId& id) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : id.internal) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace triaudit;
  // The command line first, before MPI or CUDA: --help, a bad flag or a stray word get their
  // answer (exit 0 / 2) on any machine, as every other executable gives it.
  SuiteSpec spec = base_spec();
  const std::string exe = spec.executable;
  if (const auto rc = check_command_line(argc, argv, spec, {"--dry-run"})) return *rc;
  // The catalogue needs no launcher, MPI or device: the same list everywhere.
  if (lists_catalogue(argc, argv)) return suite_main(argc, argv, spec);
  // Every rank must run the cases in the same order: Google Benchmark seeds its shuffle per process.
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_enable_random_interleaving", 38) == 0 &&
        std::strcmp(argv[i], "--benchmark_enable_random_interleaving=false") != 0) {
      std::cerr << exe << ": bad command line: " << argv[i]
                << " would run the cases in a different order on every rank (each process shuffles on its own)\n";
      return kExitBadCommandLine;
    }

  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  int local_rank = 0, local_size = 1;
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_size(local, &local_size);
  int leader = local_rank == 0 ? 1 : 0, nodes = 1;
  MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  // One unique id per algorithm variant: made by rank 0, broadcast to all (no GPU needed).
  std::map<std::string, ncclUniqueId> ids;
  int id_ok = 1;
  for (const std::string& algo : g_opt.algos) {
    ncclUniqueId id{};
    if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) id_ok = 0;
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ids[algo] = id;
  }
  MPI_Bcast(&id_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);

  int count = 0;
  const cudaError_t ce = cudaGetDeviceCount(&count);
  std::string map_error = ce == cudaSuccess ? "" : std::string("no CUDA device (") + cudaGetErrorString(ce) + ")";
  int device = ce == cudaSuccess ? device_for_local_rank(local_rank, local_size, count, &map_error) : -1;
  // Two ranks of a node must not share a GPU (e.g. one GPU visible to each, but the same one):
  // compare the chosen devices' UUIDs over the node.
  char uuid[16] = {};
  if (device >= 0) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) std::memcpy(uuid, prop.uuid.bytes, sizeof uuid);
  }
  std::vector<char> uuids(static_cast<std::size_t>(local_size) * sizeof uuid);
  MPI_Allgather(uuid, sizeof uuid, MPI_CHAR, uuids.data(), sizeof uuid, MPI_CHAR, local);
  for (int r = 0; r < local_size && device >= 0; ++r)
    if (r != local_rank && std::memcmp(&uuids[static_cast<std::size_t>(r) * sizeof uuid], uuid, sizeof uuid) == 0 &&
        std::any_of(uuid, uuid + sizeof uuid, [](char ch) { return ch != 0; })) {
      map_error = "local ranks " + std::to_string(std::min(r, local_rank)) + " and " +
                  std::to_string(std::max(r, local_rank)) + " would share one GPU: start at most one rank per GPU";
      device = -1;
    }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  char line[1024];
  std::snprintf(line, sizeof line, "rank %d of %d on %s: local rank %d of %d, %d node(s); NCCL unique id %s; device %s",
                rank, size, host, local_rank, local_size, nodes,
                id_ok ? fingerprint(ids.begin()->second).c_str() : "FAILED",
                device >= 0 ? std::to_string(device).c_str() : map_error.c_str());
  std::vector<char> all(rank == 0 ? static_cast<std::size_t>(size) * sizeof line : 1);
  MPI_Gather(line, sizeof line, MPI_CHAR, all.data(), sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);

  // The worst over ranks: 3 NCCL could not make an id (a failure, exit 1), 2 ranks mapped onto GPUs
  // they cannot use (the launch's setup, exit 2), 1 no GPU (77), 0 ready.
  int worst = 0, mine = !id_ok ? 3 : (device < 0 ? (ce == cudaSuccess ? 2 : 1) : 0);
  MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  if (has_flag(argc, argv, "--dry-run")) {
    if (rank == 0)
      for (int r = 0; r < size; ++r) std::printf("%s\n", &all[static_cast<std::size_t>(r) * sizeof line]);
    MPI_Finalize();
    return id_ok ? 0 : 1;  // the bootstrap got through; mapping problems are printed per rank
  }
  // No rank has a CUDA device: the suite still runs on every rank, in step, each case skipped with
  // the reason (rank 0 reports and writes the result file), as the single-process build does.
  int best = 0;
  MPI_Allreduce(&mine, &best, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const bool no_device_anywhere = worst == 1 && best == 1;
  if (worst != 0 && !no_device_anywhere) {
    if (rank == 0) {
      for (int r = 0; r < size; ++r) std::fprintf(stderr, "%s\n", &all[static_cast<std::size_t>(r) * sizeof line]);
      std::fprintf(stderr, "%s: not every rank has a GPU and a unique id: nothing measured\n", exe.c_str());
    }
    MPI_Finalize();
    return worst == 1 ? kExitNoDevice : worst == 2 ? kExitBadCommandLine : 1;
  }

  // Rank 0 reports; the others keep quiet and write no file.
  std::vector<char*> args(argv, argv + argc);
  if (rank != 0)
    args.erase(std::remove_if(args.begin() + 1, args.end(),
                              [](char* a) { return std::strncmp(a, "--benchmark_out", 15) == 0; }),
               args.end());
  std::string device_flag = "--device=" + std::to_string(device);
  if (!no_device_anywhere) args.push_back(device_flag.data());
  args.push_back(nullptr);
  int n_args = static_cast<int>(args.size()) - 1;

  spec.quiet = rank != 0;
  const WorldInfo info{size, nodes, local_size, true};
  spec.before_run = [&] {
    set_nccl_choices({}, "NCCL's choice not recorded under MPI (run triaudit_" + the_collective().name +
                             " on one node, or read NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING output)");
    CollectiveWorld::create_mpi_rank(ids, rank, info, device);
    for (const auto& [k, v] : CollectiveWorld::get().context(the_collective().name)) benchmark::AddCustomContext(k, v);
  };
  const int rc = suite_main(n_args, args.data(), spec);
  int worst_rc = rc;
  MPI_Allreduce(&rc, &worst_rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst_rc;
}
