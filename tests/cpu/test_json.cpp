// The JSON writer behind every command's --json (tools/smla/json.hpp): arrays of each kind
// it emits, and null where a number is not finite (JSON has no infinities).
#include "json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace smla::cli {
namespace {

TEST(Json, WritesEachKindOfArray) {
  JsonObject inner;
  inner.add("k", 1);
  JsonObject json;
  json.add("numbers", std::vector<double>{1.5, 0.1, -2.0});
  json.add("counts", std::vector<int64_t>{3, -4});
  json.add("words", std::vector<std::string>{"a", "b\"c"});
  json.add("objects", std::vector<JsonObject>{inner, inner});
  json.add("none", std::vector<double>{});
  EXPECT_EQ(json.str(),
            "{\"numbers\":[1.5,0.1,-2],\"counts\":[3,-4],\"words\":[\"a\",\"b\\\"c\"],"
            "\"objects\":[{\"k\":1},{\"k\":1}],\"none\":[]}");
}

TEST(Json, ANumberThatIsNotFiniteIsNull) {
  JsonObject json;
  json.add("one", INFINITY);
  json.add("many", std::vector<double>{NAN, 2.5, -INFINITY});
  EXPECT_EQ(json.str(), "{\"one\":null,\"many\":[null,2.5,null]}");
}

}  // namespace
}  // namespace smla::cli
