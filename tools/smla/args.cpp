#include "args.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "cli.hpp"
#include "json.hpp"

namespace smla::cli {

namespace {

const OptionSpec kHelpOption{"--help", nullptr, "print this help and exit"};
const OptionSpec kJsonOption{"--json", nullptr, "print one JSON object on stdout instead of text"};

}  // namespace

Args::Args(const CommandSpec& spec, const std::vector<std::string>& argv) : spec_(spec) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      positional_.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (name == "--help" || name == "--json") {
      if (eq != std::string::npos) throw usage_error(name + " takes no value");
      (name == "--help" ? help_ : json_) = true;
      continue;
    }
    const OptionSpec* option = find(name);
    if (option == nullptr) {
      throw usage_error("unknown option '" + name + "' for 'smla " + spec_.name + "' (see smla " +
                        spec_.name + " --help)");
    }
    std::string value;
    if (option->value == nullptr) {
      if (eq != std::string::npos) throw usage_error(name + " takes no value");
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argv.size()) {
      value = argv[++i];
    } else {
      throw usage_error(name + " needs a value (" + option->value + ")");
    }
    for (const auto& [seen, unused] : values_) {
      if (seen == name) throw usage_error(name + " given twice");
    }
    values_.emplace_back(name, value);
  }
  if (help_) return;
  const int count = static_cast<int>(positional_.size());
  if (count < spec_.min_positional || count > spec_.max_positional) {
    std::ostringstream msg;
    msg << "'smla " << spec_.name << "' takes ";
    if (spec_.min_positional == spec_.max_positional) {
      msg << spec_.min_positional;
    } else {
      msg << spec_.min_positional << " to " << spec_.max_positional;
    }
    msg << " file argument(s), got " << count << " (usage: " << spec_.usage << ")";
    throw usage_error(msg.str());
  }
}

const OptionSpec* Args::find(const std::string& name) const {
  for (const OptionSpec& option : spec_.options) {
    if (name == option.name) return &option;
  }
  return nullptr;
}

bool Args::print_help_if_asked() const {
  if (help_) std::printf("%s", help_text().c_str());
  return help_;
}

std::string Args::help_text() const {
  std::ostringstream out;
  out << "usage: " << spec_.usage << "\n\n" << spec_.description << "\n\noptions:\n";
  std::vector<const OptionSpec*> all;
  for (const OptionSpec& option : spec_.options) all.push_back(&option);
  all.push_back(&kJsonOption);
  all.push_back(&kHelpOption);
  for (const OptionSpec* option : all) {
    std::string left = std::string("  ") + option->name;
    if (option->value != nullptr) left += std::string(" ") + option->value;
    out << left;
    // Align help lines in one column; a long option name gets its own line.
    if (left.size() < 28) {
      out << std::string(28 - left.size(), ' ');
    } else {
      out << "\n" << std::string(28, ' ');
    }
    out << option->help << "\n";
  }
  out << "\nexit codes: 0 ok, 1 failure, 2 usage error\n";
  return out.str();
}

bool Args::flag(const char* name) const { return value(name).has_value(); }

std::optional<std::string> Args::value(const char* name) const {
  for (const auto& [option, value] : values_) {
    if (option == name) return value;
  }
  return std::nullopt;
}

std::string Args::required(const char* name) const {
  std::optional<std::string> v = value(name);
  if (!v) throw usage_error(std::string(name) + " is required (usage: " + spec_.usage + ")");
  return *v;
}

int64_t Args::parse_integer(const char* name, const std::string& text, int64_t min,
                            int64_t max) const {
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || parsed < min || parsed > max) {
    throw usage_error(std::string(name) + " expects an integer in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "], got '" + text + "'");
  }
  return parsed;
}

int64_t Args::integer(const char* name, int64_t fallback, int64_t min, int64_t max) const {
  std::optional<std::string> v = value(name);
  return v ? parse_integer(name, *v, min, max) : fallback;
}

int64_t Args::required_integer(const char* name, int64_t min, int64_t max) const {
  return parse_integer(name, required(name), min, max);
}

double Args::parse_real(const char* name, const std::string& text, double min,
                        double max) const {
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(parsed) ||
      parsed < min || parsed > max) {
    const bool bounded = std::isfinite(min) || std::isfinite(max);
    const std::string range =
        bounded ? " in [" + shortest_text(min) + ", " + shortest_text(max) + "]" : "";
    throw usage_error(std::string(name) + " expects a finite number" + range + ", got '" + text +
                      "'");
  }
  return parsed;
}

double Args::real(const char* name) const {
  return parse_real(name, required(name), -INFINITY, INFINITY);
}

float Args::real_f32(const char* name) const {
  const std::string text = required(name);
  const double parsed = parse_real(name, text, -INFINITY, INFINITY);
  // Rounded to float32: 3.4028235e+38 (how NumPy prints float32's largest) stays finite.
  const auto single = static_cast<float>(parsed);
  if (std::isinf(single) || (parsed != 0.0 && single == 0.0f)) {
    throw usage_error(std::string(name) + " expects a number float32 holds, got '" + text +
                      "' (beyond its range)");
  }
  return single;
}

double Args::real(const char* name, double fallback, double min, double max) const {
  std::optional<std::string> v = value(name);
  return v ? parse_real(name, *v, min, max) : fallback;
}

}  // namespace smla::cli
