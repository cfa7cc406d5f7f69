// Under mpirun -np 2 (no GPU needed): cases where rank 1 fails at different points must end with
// the same verdict on both ranks, in step, and the next case must run normally on both; an outcome
// every rank shares names no rank.
// Exit 0 when every expectation held on this rank; each rank prints one line per case.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "agreement.hpp"
#include "error.hpp"

using triaudit::Agreement;

namespace {
int g_rank = 0, g_bad = 0;

// Runs one "case": setup step, agreement, three timed regions, verification step, agreement.
// Returns the verdict this rank saw.
std::string run_case(int fail_where) {
  Agreement a(true);
  try {
    a.step([&] {
      if (fail_where == 1 && g_rank == 1) throw triaudit::Error("setup failed");
    });
    a.agree();
    for (int region = 0; region < 3; ++region) {
      a.step([&] {
        if (fail_where == 2 && g_rank == 1 && region == 1) throw triaudit::Error("region 1 failed");
      });
      const auto [sum, max] = a.sum_max(1.0 + g_rank, 1.0 + g_rank);
      if (sum != 3.0 || max != 2.0) return "wrong sums";
    }
    a.step([&] {
      if (fail_where == 3 && g_rank == 1) throw triaudit::VerificationError("3 elements wrong");
      if (fail_where == 4 && g_rank == 0) throw triaudit::SkipCase("too little memory");
      if (fail_where == 5) throw triaudit::SkipCase("no CUDA device (none here)");
      if (fail_where == 6) throw triaudit::Error("failed on rank " + std::to_string(g_rank));
    });
    a.agree();
    return "ok";
  } catch (const triaudit::SkipCase& e) {
    return std::string("skipped: ") + e.what();
  } catch (const triaudit::VerificationError& e) {
    return std::string("verification: ") + e.what();
  } catch (const triaudit::Error& e) {
    return std::string("error: ") + e.what();
  }
}

void expect(const std::string& got, const std::string& want) {
  std::printf("rank %d: %s%s\n", g_rank, got.c_str(), got == want ? "" : ("   <-- expected " + want).c_str());
  if (got != want) ++g_bad;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  expect(run_case(0), "ok");
  expect(run_case(1), "error: rank 1: setup failed");
  expect(run_case(0), "ok");  // the next case runs in step
  expect(run_case(2), "error: rank 1: region 1 failed");
  expect(run_case(3), "verification: rank 1: 3 elements wrong");
  expect(run_case(4), "skipped: rank 0: too little memory");
  expect(run_case(0), "ok");
  // The same outcome and message on every rank is the job's: no rank named.
  expect(run_case(5), "skipped: no CUDA device (none here)");
  // Every rank failed, each its own way: the lowest rank's message, named.
  expect(run_case(6), "error: rank 0: failed on rank 0");
  expect(run_case(0), "ok");
  // Rank 1's communicators are gone: every other rank is told to abort its own.
  {
    bool told = false;
    Agreement a(true);
    a.on_broken([&](const std::string&) { told = true; });
    a.broken_probe([] { return g_rank == 1; });
    a.step([] {
      if (g_rank == 1) throw triaudit::Error("NCCL reported an error; communicators aborted");
    });
    std::string got = "ok";
    try {
      a.agree();
    } catch (const triaudit::Error& e) {
      got = std::string("error: ") + e.what() + (told ? " (told to abort)" : "");
    }
    expect(got, g_rank == 1 ? "error: rank 1: NCCL reported an error; communicators aborted"
                            : "error: rank 1: NCCL reported an error; communicators aborted (told to abort)");
  }
  int bad = 0;
  MPI_Allreduce(&g_bad, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return bad == 0 ? 0 : 1;
}
