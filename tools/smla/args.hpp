// Option parsing shared by every command. A command declares its options once (name, value
// placeholder, help line); the same declaration drives parsing and `--help`, so the two
// cannot drift apart. Every command also takes --help and --json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace smla::cli {

struct OptionSpec {
  const char* name;   // "--reps"
  const char* value;  // placeholder shown in help ("N"); nullptr for a flag without value
  const char* help;
};

struct CommandSpec {
  const char* name;         // "bench"
  const char* usage;        // "smla bench [options]"
  const char* description;  // a paragraph for --help
  std::vector<OptionSpec> options;
  int min_positional = 0;
  int max_positional = 0;
};

class Args {
 public:
  // Accepts "--name value" and "--name=value". Throws a usage error (exit 2) for an unknown
  // option, a missing value, a value given to a flag, or a wrong number of positionals
  // (the count is not checked when --help is present, so help always works).
  Args(const CommandSpec& spec, const std::vector<std::string>& argv);

  bool help() const { return help_; }
  // With --help, prints the command's help and returns true: the command then exits 0.
  bool print_help_if_asked() const;
  bool json() const { return json_; }
  std::string help_text() const;

  bool flag(const char* name) const;
  std::optional<std::string> value(const char* name) const;
  std::string required(const char* name) const;
  // Numbers must parse completely ("12x" is a usage error) and lie in [min, max].
  int64_t integer(const char* name, int64_t fallback, int64_t min, int64_t max) const;
  int64_t required_integer(const char* name, int64_t min, int64_t max) const;
  double real(const char* name) const;  // required, finite
  // Required and representable as a float: finite there, and nonzero there unless zero.
  float real_f32(const char* name) const;
  // Optional, finite and in [min, max].
  double real(const char* name, double fallback, double min, double max) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  const OptionSpec* find(const std::string& name) const;
  int64_t parse_integer(const char* name, const std::string& text, int64_t min, int64_t max) const;
  double parse_real(const char* name, const std::string& text, double min, double max) const;

  const CommandSpec& spec_;
  std::vector<std::pair<std::string, std::string>> values_;  // (option, value or "")
  std::vector<std::string> positional_;
  bool help_ = false;
  bool json_ = false;
};

}  // namespace smla::cli
