// What each case says of itself in the result file (JSON schema 2, case_description.hpp).
#include "case_description.hpp"

#include <gtest/gtest.h>

namespace triaudit {
namespace {

TEST(CaseDescription, AxesComeFromTheNameAndTheJudgedCounterFromTheCounters) {
  const std::string j = case_json("synthetic/triad/fp32/cache:cold/bytes:1024/manual_time",
                                  {{"bytes_per_second", 1e12}, {"time_s", 1e-3}, {"peak_fraction", 0.9}});
  EXPECT_EQ(j,
            "{\"axes\": {\"op\": \"triad\", \"variant\": \"fp32\", \"cache\": \"cold\", \"bytes\": \"1024\"}, "
            "\"judged\": \"bytes_per_second\", \"scope\": \"gpu\"}");
}

TEST(CaseDescription, OneRankHasNoBusAndAnErroredCaseNoJudgedCounter) {
  EXPECT_NE(case_json("synthetic/x/fp32/bytes:8", {{"busbw", 0.0}, {"algbw", 5e9}}).find("\"judged\": \"algbw\""),
            std::string::npos);
  EXPECT_EQ(case_json("synthetic/x/fp32/bytes:8", {}).find("judged"), std::string::npos);
}

TEST(CaseDescription, ADescribedCaseAddsItsAxesItsCounterAndItsHeadline) {
  note_case("synthetic/llm/bf16/llm:layer/tokens:1");
  describe_case("synthetic/llm/bf16/llm:layer/tokens:1",
                {"flops", "bf16/burst", {{"m", "4096"}, {"n", "1"}, {"k", "4096"}, {"tokens", "9"}}});
  const std::string j = case_json("synthetic/llm/bf16/llm:layer/tokens:1", {{"time_s", 1.0}});
  EXPECT_NE(j.find("\"llm\": \"layer\", \"tokens\": \"1\", \"m\": \"4096\", \"n\": \"1\", \"k\": \"4096\"}"),
            std::string::npos)
      << j;  // the name's tokens:1 wins over a described axis of the same key
  EXPECT_NE(j.find("\"judged\": \"flops\""), std::string::npos);
  EXPECT_NE(j.find("\"headline\": \"bf16/burst\""), std::string::npos);
  EXPECT_NE(describe_all_cases().find("{\"name\": \"synthetic/llm/bf16/llm:layer/tokens:1\", \"triaudit\": "),
            std::string::npos);
}

TEST(CaseDescription, TheFieldIsTheRunsFirstMemberAtItsIndentation) {
  const std::string run = ",\n    {\n      \"name\": \"a/b/c\",\n      \"real_time\": 1\n    }";
  EXPECT_EQ(with_case_field(run, "{}"),
            ",\n    {\n      \"triaudit\": {},\n      \"name\": \"a/b/c\",\n      \"real_time\": 1\n    }");
  EXPECT_EQ(with_case_field("no object", "{}"), "no object");
}

TEST(CaseDescription, ANameOutsideTheGrammarIsDescribedByItsPartsNeverAnAbort) {
  // A case named outside <corner>/<op>/<variant>/... (a test's, a user's): described as far as its
  // name goes; the result file is never lost to an exception in the reporter.
  EXPECT_EQ(case_json("lost_context/trap/manual_time", {}), "{\"axes\": {\"op\": \"trap\"}, \"scope\": \"gpu\"}");
  EXPECT_EQ(case_json("single", {{"time_s", 1.0}}), "{\"axes\": {}, \"judged\": \"time_s\", \"scope\": \"gpu\"}");
}

TEST(CaseDescription, NamesAreEscapedAsJson) {
  note_case("synthetic/q\"uote/v");
  EXPECT_NE(describe_all_cases().find("\"synthetic/q\\\"uote/v\""), std::string::npos);
}

}  // namespace
}  // namespace triaudit
