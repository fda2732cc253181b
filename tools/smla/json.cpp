#include "json.hpp"

#include <cmath>
#include <cstdio>

namespace smla::cli {

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

JsonObject& JsonObject::add_raw(const std::string& key, std::string rendered) {
  fields_.emplace_back(key, std::move(rendered));
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, const std::string& value) {
  return add_raw(key, json_quote(value));
}

JsonObject& JsonObject::add(const std::string& key, const char* value) {
  return add(key, std::string(value));
}

JsonObject& JsonObject::add(const std::string& key, double value) {
  if (!std::isfinite(value)) return add_raw(key, "null");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", value);
  return add_raw(key, buf);
}

JsonObject& JsonObject::add(const std::string& key, int64_t value) {
  return add_raw(key, std::to_string(value));
}

JsonObject& JsonObject::add(const std::string& key, bool value) {
  return add_raw(key, value ? "true" : "false");
}

JsonObject& JsonObject::add(const std::string& key, const JsonObject& value) {
  return add_raw(key, value.str());
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<JsonObject>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += values[i].str();
  }
  return add_raw(key, out + "]");
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += json_quote(values[i]);
  }
  return add_raw(key, out + "]");
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  return add_raw(key, out + "]");
}

std::string JsonObject::str() const {
  std::string out = "{";
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (i) out += ',';
    out += json_quote(fields_[i].first);
    out += ':';
    out += fields_[i].second;
  }
  return out + "}";
}

}  // namespace smla::cli
