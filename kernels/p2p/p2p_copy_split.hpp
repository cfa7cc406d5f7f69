// How the GPU-to-GPU SM copy divides a copy: 16-byte vectors for the bulk, then up to three
// 4-byte words (the latency cases copy 4 bytes). Host-compilable, unit-tested on the CPU.
#pragma once
#include <cstddef>

#include "common/host_device.hpp"

namespace triaudit::kernels {

struct P2pCopySplit {
  std::size_t vectors = 0;            // 16-byte vectors from the start
  std::size_t tail_words = 0;         // 4-byte words after them (0-3)
  std::size_t tail_offset_words = 0;  // where the tail starts, in words
};

// `bytes` must be a multiple of 4.
TRIAUDIT_HD inline P2pCopySplit p2p_copy_split(std::size_t bytes) {
  P2pCopySplit s;
  s.vectors = bytes / 16;
  s.tail_words = (bytes % 16) / 4;
  s.tail_offset_words = s.vectors * 4;
  return s;
}

}  // namespace triaudit::kernels
