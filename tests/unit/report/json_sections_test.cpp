// A command's own JSON sections (RunSummary::sections) as the document holds them: values
// embedded in the order given, after the records, each keeping its own key order and
// numbers as written, so a producer hands a value and the file reads as it always has.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commbench/core/record.hpp"
#include "commbench/report/json_reporter.hpp"
#include "temp_dir.hpp"

namespace commbench {
namespace {

using nlohmann::ordered_json;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

RunContext check_context() {
  RunContext context;
  context.schema = "commbench.validate/1";
  context.program = "bench-validate";
  context.record_kind = "check";
  return context;
}

// The document after its (empty) records: what the sections made of it, as text.
std::string document_tail(const std::string& text) {
  const std::string records = "  \"checks\": [],\n";
  const std::size_t start = text.find(records);
  return start == std::string::npos ? text : text.substr(start + records.size());
}

std::string written_document(const RunSummary& summary) {
  const testing::TempDir dir;
  const std::string path = dir.path("r.json");
  JsonReporter json(path, nullptr);
  json.begin(check_context());
  json.finish(summary);
  return read_text(path);
}

TEST(JsonSections, ValuesFollowTheRecordsInTheOrderGivenEachWithItsOwnKeyOrder) {
  RunSummary summary;
  ordered_json plan = ordered_json::object();
  plan["rounds"] = 3;
  plan["fraction"] = 0.75;
  plan["expect"] = "majority";
  nlohmann::json by_name = {{"verdict", "ok"}, {"basis", "sweep"}};  // nlohmann::json sorts its keys
  summary.sections = {{"plan", plan},     {"by_name", by_name}, {"straggler", nullptr},
                      {"sum", 0.1 + 0.2}, {"whole", 1.0},       {"exit_code", 0}};
  const std::string text = written_document(summary);
  EXPECT_EQ(document_tail(text),
            "  \"plan\": {\n"
            "    \"rounds\": 3,\n"
            "    \"fraction\": 0.75,\n"
            "    \"expect\": \"majority\"\n"
            "  },\n"
            "  \"by_name\": {\n"
            "    \"basis\": \"sweep\",\n"
            "    \"verdict\": \"ok\"\n"
            "  },\n"
            "  \"straggler\": null,\n"
            "  \"sum\": 0.30000000000000004,\n"
            "  \"whole\": 1.0,\n"
            "  \"exit_code\": 0\n"
            "}\n");
  const ordered_json doc = ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "complete", "provenance", "checks", "plan", "by_name",
                                            "straggler", "sum", "whole", "exit_code"}));
}

TEST(JsonSections, ALaterSectionOfTheSameKeyReplacesTheValueInItsFirstPlace) {
  RunSummary summary;
  summary.sections = {{"exit_code", 0}, {"nodes", ordered_json::array({"a", "b"})}, {"exit_code", 4}};
  const ordered_json doc = ordered_json::parse(written_document(summary));
  EXPECT_EQ(doc["exit_code"], 4);
  EXPECT_EQ(doc["nodes"], ordered_json::array({"a", "b"}));
  EXPECT_EQ(std::prev(doc.end()).key(), "nodes");
}

TEST(JsonSections, TextThatIsNotUtf8IsWrittenWithReplacementCharacters) {
  // A host or NIC name read from the system may hold any bytes: the file stays valid JSON.
  RunSummary summary;
  std::string host = "node-1";
  host[4] = static_cast<char>(0xff);
  summary.sections = {{"host", host}};
  const ordered_json doc = ordered_json::parse(written_document(summary));
  EXPECT_EQ(doc["host"], std::string("node\xef\xbf\xbd") + "1");
}

TEST(JsonSections, NoSectionsLeaveTheDocumentAtItsRecords) {
  const ordered_json doc = ordered_json::parse(written_document(RunSummary{}));
  EXPECT_EQ(doc.size(), 4u);
  EXPECT_TRUE(doc["checks"].is_array());
  EXPECT_FALSE(doc.contains("summary")) << "the summary object is the row kind's only";
}

}  // namespace
}  // namespace commbench
