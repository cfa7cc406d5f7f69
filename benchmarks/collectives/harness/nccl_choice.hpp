// Which algorithm and protocol NCCL chose per case. NCCL says so only in its debug log
// (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING), and logging every collective during the
// measurement would put a file write beside every small collective. So the single-process
// executable runs a short probe first: a child process with the debug log on runs each case's
// collective once and writes "algo type bytes choice" lines; the measured run labels its cases
// from them. Under MPI no probe runs (a child cannot join the job); the label says so.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace triaudit {

// The probe's answers: (algo, type, bytes) -> "Ring/LL128".
using NcclChoices = std::map<std::string, std::string>;
std::string nccl_choice_key(const std::string& algo, const std::string& type, std::uint64_t bytes);

// Reads the probe's output ("<algo> <type> <bytes> <choice>" per line).
NcclChoices read_nccl_choices(const std::string& text);
std::string format_nccl_choice(const std::string& algo, const std::string& type, std::uint64_t bytes,
                               const std::string& choice);

// What the label says for a case: "NCCL chose Ring/LL", or why it is not known.
void set_nccl_choices(NcclChoices choices, std::string why_unknown);
std::string nccl_choice_label(const std::string& algo, const std::string& type, std::uint64_t bytes, int ranks);

}  // namespace triaudit
