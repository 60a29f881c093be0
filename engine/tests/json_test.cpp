#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/json.h"

namespace commatlas {
namespace {

TEST(Json, Escaping) {
  EXPECT_EQ(json_escape("plain"), "\"plain\"");
  EXPECT_EQ(json_escape("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(json_escape("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(json_escape("l1\nl2\r\t"), "\"l1\\nl2\\r\\t\"");
  EXPECT_EQ(json_escape(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(json_escape("µs"), "\"µs\"");  // UTF-8 passes through
}

TEST(Json, Nesting) {
  JsonWriter w;
  w.begin_object();
  w.field("a", 1);
  w.key("b").begin_array().value(1).value("x").begin_object().field("c", true).end_object().end_array();
  w.key("d").begin_object().end_object();
  w.field("e", std::string("s"));
  w.end_object();
  EXPECT_EQ(w.str(), R"({"a":1,"b":[1,"x",{"c":true}],"d":{},"e":"s"})");
}

TEST(Json, NonFiniteBecomesNull) {
  JsonWriter w;
  w.begin_array();
  w.value(std::numeric_limits<double>::quiet_NaN());
  w.value(std::numeric_limits<double>::infinity());
  w.value(-std::numeric_limits<double>::infinity());
  w.value(0.5);
  w.end_array();
  EXPECT_EQ(w.str(), "[null,null,null,0.5]");
}

TEST(Json, NumbersAndParams) {
  JsonWriter w;
  w.begin_object();
  w.field("big", std::uint64_t{18446744073709551615ull});
  w.field("neg", std::int64_t{-3});
  w.field("p", ParamValue{std::string("pinned")});
  w.field("q", ParamValue{std::int64_t{4}});
  w.field("f", ParamValue{false});
  w.field("v", std::vector<double>{1e-9, 2});
  w.key("n").null();
  w.end_object();
  EXPECT_EQ(w.str(), R"({"big":18446744073709551615,"neg":-3,"p":"pinned","q":4,"f":false,"v":[1e-09,2],"n":null})");
}

}  // namespace
}  // namespace commatlas

TEST(JsonWriter, FixedKeepsTimestampResolution) {
  commatlas::JsonWriter w;
  w.begin_array().fixed(1795413130.1234, 3).fixed(std::numeric_limits<double>::infinity(), 3).end_array();
  EXPECT_EQ(w.str(), "[1795413130.123,null]");
}
