// How much may wait behind one stream hold (StreamLatch), where CUDA-free code can see it: the
// case catalogues size their regions by it, and the latch enforces it.
#pragma once

namespace triaudit {

// Queue entries (launches, copies, event records) behind one hold.
constexpr int kLatchMaxQueuedEntries = 128;
// What a region's operations may use: the hold's budget less the region's two event records.
constexpr int kLatchEntriesForOps = kLatchMaxQueuedEntries - 2;

}  // namespace triaudit
