// JsonFields: every read checks the type first, the first failure names the field with its path,
// and nested readers report into their parent.
#include <gtest/gtest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "berth/json_fields.h"

namespace berth {
namespace {

using nlohmann::json;

TEST(JsonFields, OptionalMembersFallBackWhenAbsentOrNull) {
  json j = json::parse(R"({"a":null,"n":7,"s":"x","b":true,"l":["p","q"],"m":{"k":"v"},"u":[1,2]})");
  JsonFields f(j);
  EXPECT_EQ(f.string("s"), "x");
  EXPECT_EQ(f.string("a", "fallback"), "fallback");
  EXPECT_EQ(f.string("missing", "fb"), "fb");
  EXPECT_EQ(f.integer<int>("n", 0), 7);
  EXPECT_EQ(f.integer<int>("a", -3), -3);
  EXPECT_TRUE(f.boolean("b", false));
  EXPECT_EQ(f.strings("l"), (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(f.string_map("m"), (std::map<std::string, std::string>{{"k", "v"}}));
  EXPECT_EQ(f.integers<uint32_t>("u"), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(f.object("a"), nullptr);
  EXPECT_TRUE(f.ok()) << f.status().message();
}

TEST(JsonFields, EachWrongValueIsNamedWithItsPath) {
  struct Case {
    const char* text;
    std::function<void(JsonFields&)> read;
    const char* why;
  } cases[] = {
      {R"({"s":5})", [](JsonFields& f) { f.string("s"); }, "field 's': type must be string, but is number"},
      {R"({"n":1.5})", [](JsonFields& f) { f.integer<int>("n", 0); }, "field 'n': type must be integer, but is number"},
      {R"({"n":"1"})", [](JsonFields& f) { f.integer<uint32_t>("n", 0); },
       "field 'n': type must be unsigned integer, but is string"},
      {R"({"n":-1})", [](JsonFields& f) { f.integer<uint32_t>("n", 0); }, "field 'n': integer -1 out of range"},
      {R"({"n":4294967296})", [](JsonFields& f) { f.integer<uint32_t>("n", 0); },
       "field 'n': integer 4294967296 out of range"},
      {R"({"n":18446744073709551615})", [](JsonFields& f) { f.integer<int64_t>("n", 0); },
       "field 'n': integer 18446744073709551615 out of range"},
      {R"({"l":["a",3]})", [](JsonFields& f) { f.strings("l"); }, "field 'l[1]': type must be string, but is number"},
      {R"({"u":[1,null]})", [](JsonFields& f) { f.integers<int>("u"); },
       "field 'u[1]': type must be integer, but is null"},
      {R"({"m":{"k":false}})", [](JsonFields& f) { f.string_map("m"); },
       "field 'm.k': type must be string, but is boolean"},
      {R"({})", [](JsonFields& f) { f.required_string("id"); }, "field 'id': missing"},
      {R"({"id":null})", [](JsonFields& f) { f.required_string("id"); },
       "field 'id': type must be string, but is null"},
      {R"({"n":null})", [](JsonFields& f) { f.required_integer<int>("n"); },
       "field 'n': type must be integer, but is null"},
      {R"({"o":[]})", [](JsonFields& f) { f.required_object("o"); }, "field 'o': type must be object, but is array"},
      {R"({"o":{"p":{"q":1}}})",
       [](JsonFields& f) {
         JsonFields o = f.nested(*f.object("o"), "o");
         JsonFields p = o.nested(*o.object("p"), "p");
         p.required_boolean("q");
       },
       "field 'o.p.q': type must be boolean, but is number"},
      {R"({"a":[5]})", [](JsonFields& f) { f.nested((*f.array("a"))[0], "a[0]"); },
       "field 'a[0]': type must be object, but is number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    json j = json::parse(c.text);
    JsonFields f(j);
    EXPECT_NO_THROW(c.read(f));
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), Code::invalid_argument);
    EXPECT_EQ(f.status().message(), c.why);
  }
}

TEST(JsonFields, FirstFailureWinsAcrossNestedReaders) {
  json j = json::parse(R"({"a":1,"o":{"b":2}})");
  JsonFields f(j, "doc");
  {
    JsonFields o = f.nested(*f.object("o"), "o");
    o.string("b");
  }
  f.string("a");
  EXPECT_EQ(f.status().message(), "field 'doc.o.b': type must be string, but is number");
  json not_object = json::array();
  JsonFields top(not_object);
  EXPECT_EQ(top.status().message(), "type must be object, but is array");
  EXPECT_EQ(top.string("x", "fb"), "fb");  // a non-object reads as empty, never throws
}

// has() is what the optional reads see (null is absent); member() is any value that is there,
// null included, for the caller to check. Neither records a failure.
TEST(JsonFields, HasAndMemberTellAbsentFromNull) {
  json j = json::parse(R"({"n":null,"s":"x","o":{}})");
  JsonFields f(j);
  EXPECT_FALSE(f.has("n"));
  EXPECT_TRUE(f.has("s"));
  EXPECT_FALSE(f.has("missing"));
  ASSERT_NE(f.member("n"), nullptr);
  EXPECT_TRUE(f.member("n")->is_null());
  EXPECT_EQ(f.member("o"), &j["o"]);
  EXPECT_EQ(f.member("missing"), nullptr);
  EXPECT_TRUE(f.ok());
  json not_object = 5;
  JsonFields top(not_object);
  EXPECT_FALSE(top.has("s"));
  EXPECT_EQ(top.member("s"), nullptr);
}

}  // namespace
}  // namespace berth
