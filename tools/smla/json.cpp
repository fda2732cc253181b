#include "json.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace smla::cli {

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (1-4), or 0 when the bytes there
// are not one (a stray continuation byte, a truncated or overlong sequence, a surrogate).
size_t utf8_sequence_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  // (lead-byte mask, its value, sequence length, smallest code point that needs it)
  struct Form {
    unsigned char mask, value;
    size_t length;
    uint32_t min;
  };
  constexpr Form kForms[] = {{0xE0, 0xC0, 2, 0x80}, {0xF0, 0xE0, 3, 0x800},
                             {0xF8, 0xF0, 4, 0x10000}};
  size_t n = 0;
  uint32_t code = 0, min = 0;
  for (const Form& form : kForms) {
    if ((lead & form.mask) == form.value) {
      n = form.length;
      code = lead & static_cast<unsigned char>(~form.mask);
      min = form.min;
    }
  }
  if (n == 0) return 0;
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  const bool surrogate = code >= 0xD800 && code <= 0xDFFF;
  return code < min || code > 0x10FFFF || surrogate ? 0 : n;
}

// A number as JSON has it: null for an infinity or a NaN.
std::string json_number(double value) {
  return std::isfinite(value) ? shortest_text(value) : "null";
}

// "[a,b,...]", each value as `render` writes it.
template <class T, class Render>
std::string json_array(const std::vector<T>& values, Render render) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += render(values[i]);
  }
  return out + "]";
}

}  // namespace

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      // JSON is UTF-8: a valid sequence is copied, a byte that starts none (a file name
      // in another encoding) becomes U+FFFD, so the output always parses.
      const size_t n = utf8_sequence_length(text, i);
      if (n == 0) {
        out += "\\ufffd";
      } else {
        out.append(text, i, n);
        i += n - 1;
      }
      continue;
    }
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

std::string shortest_text(double value) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, value).ptr);
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
  return add_raw(key, json_number(value));
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
  return add_raw(key, json_array(values, [](const JsonObject& v) { return v.str(); }));
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<std::string>& values) {
  return add_raw(key, json_array(values, json_quote));
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<int64_t>& values) {
  return add_raw(key, json_array(values, [](int64_t v) { return std::to_string(v); }));
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<double>& values) {
  return add_raw(key, json_array(values, json_number));
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
