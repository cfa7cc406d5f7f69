#include "nccl_choice.hpp"

#include <sstream>

namespace triaudit {
namespace {
struct State {
  NcclChoices choices;
  std::string why_unknown = "NCCL's choice not recorded";
};
State& state() {
  static State s;
  return s;
}
}  // namespace

std::string nccl_choice_key(const std::string& algo, const std::string& type, std::uint64_t bytes) {
  return algo + " " + type + " " + std::to_string(bytes);
}

std::string format_nccl_choice(const std::string& algo, const std::string& type, std::uint64_t bytes,
                               const std::string& choice) {
  return nccl_choice_key(algo, type, bytes) + " " + choice + "\n";
}

NcclChoices read_nccl_choices(const std::string& text) {
  NcclChoices out;
  std::istringstream in(text);
  std::string algo, type, choice;
  std::uint64_t bytes = 0;
  while (in >> algo >> type >> bytes >> choice) out[nccl_choice_key(algo, type, bytes)] = choice;
  return out;
}

void set_nccl_choices(NcclChoices choices, std::string why_unknown) {
  state().choices = std::move(choices);
  state().why_unknown = std::move(why_unknown);
}

std::string nccl_choice_label(const std::string& algo, const std::string& type, std::uint64_t bytes, int ranks) {
  if (ranks <= 1) return "";
  const auto it = state().choices.find(nccl_choice_key(algo, type, bytes));
  if (it != state().choices.end()) return "NCCL chose " + it->second;
  return state().why_unknown;
}

}  // namespace triaudit
