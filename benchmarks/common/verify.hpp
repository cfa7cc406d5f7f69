// Checking device output element by element against a host reference, on all host cores.
// Pure host code (unit-tested): the benchmark copies the output back and calls this once per
// case, outside the timed region.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace triaudit {

struct VerifyResult {
  std::uint64_t checked = 0;
  std::uint64_t wrong = 0;
  std::uint64_t first_wrong = 0;  // index, valid when wrong > 0
  double got = 0, expected = 0;   // at first_wrong
  std::string detail;             // a check that is not element by element says what failed
  bool ok() const { return wrong == 0 && checked > 0; }
  std::string describe() const {
    std::ostringstream os;
    os.precision(9);
    if (checked == 0) return "no element checked";
    if (!detail.empty()) return detail;
    os << wrong << " of " << checked << " checked elements wrong; first at index " << first_wrong << ": got " << got
       << ", expected " << expected;
    return os.str();
  }
};

// Two checks as one: counts added, the first wrong element of the first check that has one.
inline VerifyResult combine_results(VerifyResult a, const VerifyResult& b) {
  if (a.wrong == 0 && b.wrong > 0) {
    a.first_wrong = b.first_wrong;
    a.got = b.got;
    a.expected = b.expected;
    a.detail = b.detail;
  }
  a.checked += b.checked;
  a.wrong += b.wrong;
  return a;
}

// The indices verify_elements checks: 0, stride, 2*stride, ... and the last one. A device check
// that copies only these elements to the host uses the same list.
inline std::vector<std::uint64_t> sampled_indices(std::uint64_t n, std::uint64_t stride) {
  if (stride == 0) stride = 1;
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = 0; i < n; i += stride) out.push_back(i);
  if (n > 0 && (n - 1) % stride != 0) out.push_back(n - 1);
  return out;
}

// Checks got[i] for i = 0, stride, 2*stride, ... and the last element against expected(i),
// allowing |got - expected| <= tolerance(i). NaN never passes. stride 1 checks every element.
template <typename T, typename Expected, typename Tolerance>
VerifyResult verify_elements(const T* got, std::uint64_t n, Expected expected, Tolerance tolerance,
                             std::uint64_t stride = 1) {
  if (stride == 0) stride = 1;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t steps = n == 0 ? 0 : (n - 1) / stride + 1;
  const unsigned workers =
      static_cast<unsigned>(std::min<std::uint64_t>(hw, std::max<std::uint64_t>(1, steps / 65536)));
  std::vector<VerifyResult> parts(workers);
  auto check_range = [&](unsigned w) {
    VerifyResult& r = parts[w];
    const std::uint64_t lo = steps * w / workers, hi = steps * (w + 1) / workers;
    for (std::uint64_t s = lo; s < hi; ++s) {
      const std::uint64_t i = s * stride;
      const double e = static_cast<double>(expected(i));
      const double g = static_cast<double>(got[i]);
      ++r.checked;
      if (!(std::fabs(g - e) <= static_cast<double>(tolerance(i)))) {
        if (r.wrong++ == 0) {
          r.first_wrong = i;
          r.got = g;
          r.expected = e;
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned w = 1; w < workers; ++w) threads.emplace_back(check_range, w);
  if (workers > 0) check_range(0);
  for (auto& t : threads) t.join();

  VerifyResult total;
  for (const auto& r : parts) {
    if (r.wrong > 0 && total.wrong == 0) {
      total.first_wrong = r.first_wrong;
      total.got = r.got;
      total.expected = r.expected;
    }
    total.checked += r.checked;
    total.wrong += r.wrong;
  }
  // The last element is where tail handling goes wrong: always check it.
  if (n > 0 && (n - 1) % stride != 0) {
    const std::uint64_t i = n - 1;
    const double e = static_cast<double>(expected(i)), g = static_cast<double>(got[i]);
    ++total.checked;
    if (!(std::fabs(g - e) <= static_cast<double>(tolerance(i)))) {
      if (total.wrong++ == 0) {
        total.first_wrong = i;
        total.got = g;
        total.expected = e;
      }
    }
  }
  return total;
}

}  // namespace triaudit
