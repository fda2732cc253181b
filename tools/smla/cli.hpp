// What every `smla` command shares: exit codes, the error a command throws to stop, and the
// table of commands that main.cpp dispatches on.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "smla/status.hpp"

namespace smla::cli {

// Scripts branch on these, so they are part of the tool's interface (docs/cli.md).
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

// A command stops by throwing one of these; main.cpp prints the message (to stderr, and as
// {"ok": false, "error": ...} on stdout under --json) and exits with `exit_code`.
// Exceptions never leave the tool: the library itself reports through smla::Status.
class CliError : public std::runtime_error {
 public:
  CliError(ExitCode exit_code, const std::string& message)
      : std::runtime_error(message), exit_code_(exit_code) {}
  ExitCode exit_code() const { return exit_code_; }

 private:
  ExitCode exit_code_;
};

inline CliError usage_error(const std::string& message) { return {kExitUsage, message}; }
inline CliError failure(const std::string& message) { return {kExitFailure, message}; }

// Throws a failure naming `what` unless the library call succeeded.
inline void check_status(const Status& status, const std::string& what) {
  if (!status.ok()) {
    throw failure(what + ": " + status.message() + " [" + status_code_name(status.code()) + "]");
  }
}

struct Command {
  const char* name;
  const char* summary;  // one line, for `smla --help`
  // Parses its own options from `argv` (everything after the command name) and runs.
  // Returns the exit code; usage and runtime errors are thrown as CliError.
  int (*run)(const std::vector<std::string>& argv);
};

int info_command(const std::vector<std::string>& argv);
int bench_command(const std::vector<std::string>& argv);
int run_command(const std::vector<std::string>& argv);
int quantize_command(const std::vector<std::string>& argv);
int dequantize_command(const std::vector<std::string>& argv);

}  // namespace smla::cli
