#include "agreement.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>

#include "error.hpp"

#if TRIAUDIT_WITH_MPI
#include <mpi.h>
#endif

namespace triaudit {

void Agreement::step(const std::function<void()>& fn) {
  if (kind_ != 0) return;
  try {
    fn();
  } catch (const SkipCase& e) {
    kind_ = 1;
    message_ = e.what();
  } catch (const VerificationError& e) {
    kind_ = 3;
    message_ = e.what();
  } catch (const std::exception& e) {
    kind_ = 2;
    message_ = e.what();
  }
}

void Agreement::fail_locally(const std::string& message) {
  if (kind_ >= 2) return;
  kind_ = 2;
  message_ = message;
}

void Agreement::throw_verdict(int kind, int rank, const std::string& message, bool every_rank) const {
  const std::string who = mpi_ && !every_rank ? "rank " + std::to_string(rank) + ": " : "";
  if (kind == 1) throw SkipCase(who + message);
  if (kind == 3) throw VerificationError(who + message);
  if (kind == 2) throw Error(who + message);
}

#if TRIAUDIT_WITH_MPI
namespace {
// The worst status over all processes, the lowest rank that has it, and its message.
struct Verdict {
  int kind = 0, rank = 0;
  bool broken = false;
  bool every_rank = false;  // every rank had this outcome, with the same message
  std::string message;
};

std::uint64_t fingerprint(const std::string& s) {  // FNV-1a: the same on every rank
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

Verdict worst_status(int kind, const std::string& message, bool broken) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  // Failures outrank skips: severity 0 ok, 1 skipped, 3 failed, 4 verification failed. MINLOC on
  // the negated severity gives the worst, and on a tie the lowest rank.
  struct {
    int value, rank;
  } mine{-(kind == 1 ? 1 : (kind == 0 ? 0 : kind + 1)), me}, worst{};
  MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
  int any_broken = 0, mine_broken = broken ? 1 : 0;
  MPI_Allreduce(&mine_broken, &any_broken, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  Verdict v;
  const int severity = -worst.value;
  v.kind = severity <= 1 ? severity : severity - 1;
  v.rank = worst.rank;
  v.broken = any_broken != 0;
  if (v.kind == 0) return v;
  // One outcome everywhere (e.g. no CUDA device on any rank) is the job's, not one rank's.
  const std::uint64_t h = fingerprint(message) ^ static_cast<std::uint64_t>(mine.value);
  std::uint64_t lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  v.every_rank = lo == hi;
  char buf[1024] = {};
  if (me == v.rank) std::strncpy(buf, message.c_str(), sizeof buf - 1);
  MPI_Bcast(buf, sizeof buf, MPI_CHAR, v.rank, MPI_COMM_WORLD);
  v.message = buf;
  return v;
}
}  // namespace
#endif

void Agreement::agree() {
#if TRIAUDIT_WITH_MPI
  if (mpi_) {
    const bool broken = kind_ != 0 && broken_probe_ && broken_probe_();
    const Verdict v = worst_status(kind_, message_, broken);
    if (v.broken && !broken && on_broken_) on_broken_(v.message);
    if (v.kind != 0) throw_verdict(v.kind, v.rank, v.message, v.every_rank);
    return;
  }
#endif
  if (kind_ != 0) throw_verdict(kind_, 0, message_, true);
}

std::pair<double, double> Agreement::sum_max(double value, double max_value) {
#if TRIAUDIT_WITH_MPI
  if (mpi_) {
    // One call carries the numbers and the status, so a rank whose region failed still meets the
    // others here: [sum, max, failed] as doubles (max of the status).
    double in[3] = {kind_ == 0 ? value : 0.0, kind_ == 0 ? max_value : 0.0, kind_ == 0 ? 0.0 : 1.0};
    double sum = 0.0, max[2] = {0.0, 0.0};
    MPI_Allreduce(&in[0], &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&in[1], max, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (max[1] > 0.0) agree();  // someone failed: every rank learns who and why, and throws
    return {sum, max[0]};
  }
#endif
  if (kind_ != 0) throw_verdict(kind_, 0, message_, true);
  return {value, max_value};
}

}  // namespace triaudit
