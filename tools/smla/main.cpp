// `smla`: the command-line face of the library. This file only dispatches: each command
// lives in its own cmd_*.cpp, parses its own options (args.hpp) and throws CliError to stop.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "cli.hpp"
#include "json.hpp"
#include "npy.hpp"
#include "smla/ops.hpp"

namespace smla::cli {

namespace {

constexpr Command kCommands[] = {
    {"info", "version, compiled CUDA architectures, devices and available backends", info_command},
    {"bench", "DeepSeek-shaped workloads: checked against float64, then timed", bench_command},
    {"run", "sparse MLA attention on .npy files", run_command},
    {"quantize", "float32 rows (.npy) -> a KV cache pool (.npy uint8)", quantize_command},
    {"dequantize", "a KV cache pool (.npy uint8) -> float32 rows (.npy)", dequantize_command},
};

void print_help() {
  std::printf(
      "smla %s: sparse MLA attention (DeepSeek-V3.2 / V4) from the command line\n\n"
      "usage: smla <command> [options]    (smla <command> --help for its options)\n\n"
      "commands:\n",
      version());
  for (const Command& command : kCommands)
    std::printf("  %-12s%s\n", command.name, command.summary);
  std::printf(
      "\nevery command takes --json (one JSON object on stdout) and --help\n"
      "exit codes: 0 ok, 1 failure, 2 usage error\n");
}

int report(const char* command, bool json, ExitCode code, const std::string& message) {
  std::fprintf(stderr, "smla%s%s: %s%s\n", command ? " " : "", command ? command : "",
               code == kExitUsage ? "usage error: " : "error: ", message.c_str());
  if (json) {
    JsonObject out;
    out.add("command", command ? command : "").add("ok", false).add("exit_code", int{code});
    out.add("error", message);
    std::printf("%s\n", out.str().c_str());
  }
  return code;
}

}  // namespace

int main_impl(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool json = std::find(args.begin(), args.end(), "--json") != args.end();
  if (args.empty()) {
    print_help();
    return kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_help();
    return kExitOk;
  }
  if (args[0] == "--version") {
    std::printf("smla %s\n", version());
    return kExitOk;
  }
  const Command* command = nullptr;
  for (const Command& candidate : kCommands) {
    if (args[0] == candidate.name) command = &candidate;
  }
  if (command == nullptr) {
    return report(nullptr, json, kExitUsage, "unknown command '" + args[0] + "' (see smla --help)");
  }
  args.erase(args.begin());
  try {
    return command->run(args);
  } catch (const CliError& e) {
    return report(command->name, json, e.exit_code(), e.what());
  } catch (const NpyError& e) {  // an output file could not be written
    return report(command->name, json, kExitFailure, e.what());
  } catch (const std::bad_alloc&) {
    return report(command->name, json, kExitFailure, "out of host memory");
  }
}

}  // namespace smla::cli

int main(int argc, char** argv) { return smla::cli::main_impl(argc, argv); }
