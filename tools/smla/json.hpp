// The one JSON object a command prints under --json. Only what the tool emits is supported:
// objects; arrays of objects, strings or numbers; strings, numbers, booleans. A non-finite
// number (an lse of +inf, a missing anchor) becomes null because JSON has no infinities.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace smla::cli {

class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value);
  JsonObject& add(const std::string& key, const char* value);
  JsonObject& add(const std::string& key, double value);
  JsonObject& add(const std::string& key, int64_t value);
  JsonObject& add(const std::string& key, int value) { return add(key, int64_t{value}); }
  JsonObject& add(const std::string& key, bool value);
  JsonObject& add(const std::string& key, const JsonObject& value);
  JsonObject& add(const std::string& key, const std::vector<JsonObject>& values);
  JsonObject& add(const std::string& key, const std::vector<std::string>& values);
  JsonObject& add(const std::string& key, const std::vector<int64_t>& values);
  JsonObject& add(const std::string& key, const std::vector<double>& values);

  std::string str() const;  // compact, one line

 private:
  JsonObject& add_raw(const std::string& key, std::string rendered);
  std::vector<std::pair<std::string, std::string>> fields_;  // key, rendered value
};

std::string json_quote(const std::string& text);
// The shortest text that reads back as `value` ("0.1", "1e-05", "inf"): JSON's numbers, and
// the labels and messages that print a value the way --json does.
std::string shortest_text(double value);

}  // namespace smla::cli
