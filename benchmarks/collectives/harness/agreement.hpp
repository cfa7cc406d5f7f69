// Keeping every rank of an MPI job in step through a case that fails on some of them.
//
// A collective's case is a sequence of MPI collectives (the per-region time, the error count). If
// one rank leaves the sequence early with an exception, the others wait in a collective it never
// joins, or pair it with a different one: a hang or undefined behaviour. So under MPI a case runs
// in phases (step), each local failure is captured instead of thrown, and ranks meet at points
// where they agree on the outcome (agree, and the per-region sum_max, which carries each rank's
// status beside its numbers). When any rank failed, every rank throws the same verdict, naming the
// rank and its message (or, when every rank had the same outcome and message, that message alone),
// and all go on to the next case together. Without MPI (one process) the
// same calls run locally. No CUDA here: tests/mpi exercises it under mpirun without a GPU.
#pragma once
#include <functional>
#include <string>
#include <utility>

namespace triaudit {

class Agreement {
 public:
  explicit Agreement(bool mpi) : mpi_(mpi) {}

  // Runs fn unless an earlier step already failed or skipped; its exception becomes the local status.
  void step(const std::function<void()>& fn);
  // Marks the local status as failed (e.g. a test switch).
  void fail_locally(const std::string& message);
  // Every rank: the worst status anywhere; throws SkipCase / VerificationError / Error for all
  // ranks alike when some rank skipped or failed.
  void agree();
  // The per-region collective: the sum of `value` and the max of `max_value` over processes,
  // and the agreement in the same call (throws like agree when some rank failed).
  std::pair<double, double> sum_max(double value, double max_value);

  bool ok() const { return kind_ == 0; }

  // When some rank's shared state is broken (e.g. its communicators aborted), `on_broken` runs on
  // every rank that is not, before the verdict is thrown. `broken_probe` says whether this rank's is.
  void on_broken(std::function<void(const std::string&)> fn) { on_broken_ = std::move(fn); }
  void broken_probe(std::function<bool()> fn) { broken_probe_ = std::move(fn); }

 private:
  void throw_verdict(int kind, int rank, const std::string& message, bool every_rank) const;
  bool mpi_;
  int kind_ = 0;  // 0 ok, 1 skipped, 2 failed, 3 verification failed
  std::string message_;
  std::function<void(const std::string&)> on_broken_;
  std::function<bool()> broken_probe_;
};

}  // namespace triaudit
