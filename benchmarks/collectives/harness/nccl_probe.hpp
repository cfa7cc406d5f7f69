// NCCL's algorithm/protocol choice per case, found by a probe run (the single-process executables
// only: one process drives every GPU, so a child with NCCL's TUNING log on can replay the catalogue).
#pragma once

#include <string>

namespace triaudit {

// The probe child (--nccl-choice-probe=FILE): writes "<algo> <type> <bytes> <Algo>/<Proto>" lines.
int run_choice_probe(const std::string& out_path);

// The parent: runs `self` again as the probe and keeps its answers for the case labels.
void probe_nccl_choices(const char* self, int argc, char** argv);

}  // namespace triaudit
