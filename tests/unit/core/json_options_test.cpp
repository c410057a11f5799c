#include "core/json_options.h"

#include <gtest/gtest.h>

#include "backend/context.h"
#include "core/error.h"

namespace nnrt {
namespace {

// Runs f and returns the error message it throws (or "" if it does not throw).
template <class F>
std::string error_of(F &&f, nnrt_status expected = NNRT_ERR_INVALID_ARGUMENT) {
  try {
    f();
  } catch (const Error &e) {
    EXPECT_EQ(e.status(), expected) << e.what();
    return e.what();
  }
  return "";
}

TEST(JsonOptions, ReadsTypedValuesAndRefusesUnknownKeys) {
  Json j = parse_json_object(R"({"a": 1, "b": "x", "c": true, "d": [1, 2], "e": 2.5, "o": {"k": 3}})", "t");
  JsonReader r(j, "opts");
  EXPECT_EQ(r.get_int("a", 0), 1);
  EXPECT_EQ(r.get_string("b", ""), "x");
  EXPECT_TRUE(r.get_bool("c", false));
  EXPECT_EQ(r.get_int_list("d", {}), (std::vector<int64_t>{1, 2}));
  EXPECT_DOUBLE_EQ(r.get_number("e", 0), 2.5);
  EXPECT_EQ(r.get_int("missing", 7), 7);
  EXPECT_NE(error_of([&] { r.finish(); }).find("unknown key 'opts.o'"), std::string::npos);
  JsonReader o = r.get_object("o");
  EXPECT_EQ(o.get_int("k", 0), 3);
  o.finish();
  r.finish();
}

TEST(JsonOptions, WrongTypesNameTheKey) {
  Json j = parse_json_object(R"({"n": "four", "f": 1.5, "l": [1, "2"], "b": 1, "s": 3})", "t");
  JsonReader r(j, "cfg");
  EXPECT_NE(error_of([&] { r.get_int("n", 0); }).find("cfg.n: expected an integer, got \"four\""), std::string::npos);
  EXPECT_NE(error_of([&] { r.get_int("f", 0); }).find("cfg.f"), std::string::npos);
  EXPECT_NE(error_of([&] { r.get_int_list("l", {}); }).find("cfg.l"), std::string::npos);
  EXPECT_NE(error_of([&] { r.get_bool("b", false); }).find("cfg.b"), std::string::npos);
  EXPECT_NE(error_of([&] { r.get_string("s", ""); }).find("cfg.s"), std::string::npos);
  EXPECT_NE(error_of([&] { r.get_int("n", 0, 0, 10); }).find("cfg.n"), std::string::npos);
}

TEST(JsonOptions, RangesAndLists) {
  Json j = parse_json_object(R"({"k": 0, "p": 3, "q": [2, 4], "r": [1, 2, 3]})", "t");
  JsonReader r(j, "");
  EXPECT_NE(error_of([&] { r.get_int("k", 0, 1, 5); }).find("from 1 to 5, got 0"), std::string::npos);
  EXPECT_EQ(r.get_int_or_list("p", {}, 2), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(r.get_int_or_list("q", {}, 2), (std::vector<int64_t>{2, 4}));
  EXPECT_NE(error_of([&] { r.get_int_or_list("r", {}, 2); }).find("a list of 2 integers"), std::string::npos);
}

TEST(JsonOptions, MalformedTextGivesThePosition) {
  std::string m = error_of([] { parse_json_object("{\"a\": }", "options"); });
  EXPECT_NE(m.find("options is not valid JSON"), std::string::npos) << m;
  EXPECT_NE(m.find("column"), std::string::npos) << m;
  EXPECT_NE(error_of([] { parse_json_object("42", "options"); }).find("expected a JSON object"), std::string::npos);
  EXPECT_TRUE(parse_json_object(nullptr, "x").empty());
  EXPECT_TRUE(parse_json_object("", "x").empty());
}

TEST(ContextOptions, ParsesEveryKey) {
  ContextOptions o = ContextOptions::parse(
      R"({"backend": "reference", "device": 0, "strict": true, "threads": 3, "deterministic": true, "seed": 9,
          "default_dtype": "f16", "cache": {"max_cached_bytes": 100, "max_block_bytes": 10}})");
  EXPECT_EQ(o.backend, "reference");
  EXPECT_TRUE(o.strict);
  EXPECT_EQ(o.threads, 3);
  EXPECT_TRUE(o.deterministic);
  EXPECT_EQ(o.seed, 9u);
  EXPECT_EQ(o.default_dtype, NNRT_DTYPE_F16);
  EXPECT_EQ(o.cache.max_cached_bytes, 100u);
  EXPECT_EQ(o.cache.max_block_bytes, 10u);
}

}  // namespace
}  // namespace nnrt
