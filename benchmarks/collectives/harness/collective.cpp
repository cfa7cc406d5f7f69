#include "collective.hpp"

namespace triaudit {
namespace {
std::vector<const CollectiveSpec*>& registry() {
  static std::vector<const CollectiveSpec*> all;
  return all;
}
}  // namespace

std::uint64_t nccl_tests_rank_chunk(std::uint64_t count, int elem_bytes, int ranks) {
  if (ranks <= 0 || elem_bytes <= 0) return 0;
  // -(16/eltSize) as nccl-tests' size_t: a mask of whole 16-byte units.
  const std::uint64_t mask = std::uint64_t{0} - static_cast<std::uint64_t>(16 / elem_bytes);
  return (count / static_cast<std::uint64_t>(ranks)) & mask;
}

CollectiveRegistration::CollectiveRegistration(const CollectiveSpec& spec) { registry().push_back(&spec); }

const std::vector<const CollectiveSpec*>& registered_collectives() { return registry(); }

const CollectiveSpec* find_collective(const std::string& name) {
  for (const CollectiveSpec* c : registry())
    if (c->name == name) return c;
  return nullptr;
}

}  // namespace triaudit
