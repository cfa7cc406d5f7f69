// The load of one GPU's soak: every workload of soak_plan.hpp kept running from start() to
// stop() by one host thread that feeds the streams and collects what finished, with every
// output checked on the device against what it must be:
//   GEMM    D poisoned, the ladder GEMM, D's tiles hashed against the first output's (which the
//           setup checked against the FP64 reference and found reproducible);
//   triad   a = b + s*c and, in turn, a = c + s*b (an operation that did not run leaves the
//           other's output: seen), hashed against the host reference of each (exact: one FMA);
//   H2D     two host patterns in turn into one device buffer, hashed against the patterns' own;
//   D2H     a device pattern into two host buffers in turn, one compared word by word with the
//           pattern every few seconds (the host's check is slower than the copy);
//   P2P     a device pattern to the peer and back, hashed on return.
// A GEMM tile that differs is kept aside (tile_hash.cuh) for diagnose_gemm, which sets the
// differing elements beside the FP64 reference.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "soak/tile_hash.hpp"
#include "soak_plan.hpp"

namespace triaudit {

// What the setup found, before any load: for the hash log and the labels.
struct EngineSetup {
  std::string fp64_check;   // the GEMM's first output against the FP64 reference
  std::string determinism;  // the GEMM run again: the same bits?
  std::string inputs;       // what the GEMM multiplies
  HashLayout gemm_layout;
  std::vector<std::uint64_t> gemm_tiles;  // the reference: the first output's tile hashes
  std::string p2p_unavailable;            // why there are no peer copies ("" when there are)
};

class SoakEngine {
 public:
  // Allocates and fills every buffer on device `ordinal` (and `peer`, -1: none), checks each
  // workload's first output and hashes the references. Throws VerificationError when an output
  // is wrong before the soak starts, SkipCase when the device cannot run the plan.
  SoakEngine(const SoakPlan& plan, int ordinal, int peer);
  ~SoakEngine();
  SoakEngine(const SoakEngine&) = delete;
  SoakEngine& operator=(const SoakEngine&) = delete;

  void start();
  void stop();
  // What finished since the previous take (the first: since start()).
  std::array<WorkloadTally, kWorkloads> take();
  // Why the load stopped ("" while it runs): a CUDA error, a sticky fault.
  std::string error() const;
  const EngineSetup& setup() const;
  // The FP64 reference's verdict on the kept tiles of GEMM `item` ("" when none was kept).
  std::string diagnose_gemm(std::uint64_t item);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace triaudit
