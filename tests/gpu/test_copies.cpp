// Every copy kind moves exactly its bytes, at small and odd-multiple sizes; the check itself
// fails when a copy is skipped.
#include <gtest/gtest.h>

#include "common/cuda_raii.hpp"
#include "common/stream_latch.hpp"
#include "memcpy/copy_runner.hpp"

using namespace triaudit;

TEST(Copies, EveryKindMovesTheRightBytes) {
  Stream s1, s2;
  for (const CopyKind& kind : copy_kinds())
    for (std::uint64_t bytes : {16ULL, 4096ULL, 65536ULL + 48, 8ULL << 20}) {
      CopyRunner run(kind, bytes);
      run.poison();
      if (copy_is_host_timed(kind)) {
        run.run_synchronous();
      } else if (kind.direction == "bidir") {  // as the benchmark runs it: each direction measured once
        run.enqueue_bidir(s1, s2, true);
        run.join(s1, s2);
        run.enqueue_bidir(s1, s2, false);
        run.join(s1, s2);
        s1.synchronize();
      } else {
        run.enqueue(s1);
        s1.synchronize();
      }
      const VerifyResult v = run.verify();
      EXPECT_TRUE(v.ok()) << kind.direction << "/" << kind.memory << " " << bytes << ": " << v.describe();
      // bidir: both 2x buffers, host and device
      EXPECT_EQ(v.checked, (kind.direction == "bidir" ? 4 : 1) * bytes / 4);
    }
}

TEST(Copies, ACopyThatDidNotRunFails) {
  CopyRunner run({"h2d", "pinned"}, 1 << 20);
  run.poison();
  EXPECT_FALSE(run.verify().ok());
}

TEST(Copies, HeldStreamRunsQueuedCopiesAfterRelease) {
  Stream s1;
  CopyRunner run({"d2d", "copy_engine"}, 1 << 20);
  run.poison();
  StreamLatch latch;
  latch.hold(s1);
  for (int i = 0; i < 10; ++i) run.enqueue(s1);
  EXPECT_EQ(cudaStreamQuery(s1), cudaErrorNotReady);  // held
  latch.release();
  s1.synchronize();
  latch.check();
  EXPECT_TRUE(run.verify().ok());
}

// A device copy of several (source, destination) sets: its copies rotate through them, every set's
// destination must arrive, and a set the rotation never reached fails the check.
TEST(Copies, DeviceCopiesRotateOverTheirSets) {
  Stream s1;
  for (const CopyKind& kind : {CopyKind{"d2d", "copy_engine"}, CopyKind{"d2d", "sm_kernel"}}) {
    CopyRunner run(kind, 4096, 5);
    ASSERT_EQ(run.sets(), 5);
    run.poison();
    for (int i = 0; i < 4; ++i) run.enqueue(s1);  // sets 0-3
    s1.synchronize();
    const VerifyResult partial = run.verify();
    EXPECT_FALSE(partial.ok()) << kind.memory;
    EXPECT_EQ(partial.first_wrong, 4u * 4096 / 4) << kind.memory;  // set 4's first word
    run.enqueue(s1);                                               // set 4
    s1.synchronize();
    const VerifyResult all = run.verify();
    EXPECT_TRUE(all.ok()) << kind.memory << ": " << all.describe();
    EXPECT_EQ(all.checked, 5u * 4096 / 4);
  }
}
