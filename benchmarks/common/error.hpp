// Errors the harness throws. The benchmark loop (suite.hpp: run_guarded) turns each into a
// Google Benchmark error with its message; nothing aborts the process.
#pragma once
#include <stdexcept>
#include <string>

namespace triaudit {

// Any failure of a checked library call or of the harness itself.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel produced a wrong result: the case is an error, never a number.
class VerificationError : public Error {
 public:
  using Error::Error;
};

// The case cannot run on this device (too little memory, compute capability too old...).
// Reported as "skipped: <reason>", not counted as a failure.
class SkipCase : public Error {
 public:
  using Error::Error;
};

// "file:line: `expr` failed: <what the library said>"
inline std::string checked_call_message(const char* file, int line, const char* expr,
                                        const std::string& library_message) {
  return std::string(file) + ":" + std::to_string(line) + ": `" + expr + "` failed: " + library_message;
}

}  // namespace triaudit
