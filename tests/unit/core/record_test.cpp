// The record kinds against their contract (docs/schema/records.schema.json), and how a
// record is written: the columns of a kind in order, booleans and empty values, digits.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "commbench/core/error.hpp"
#include "commbench/core/record.hpp"

namespace commbench {
namespace {

nlohmann::ordered_json records_schema() {
  std::ifstream file(COMMBENCH_SOURCE_DIR "/docs/schema/records.schema.json");
  EXPECT_TRUE(file.good()) << "docs/schema/records.schema.json is missing";
  return nlohmann::ordered_json::parse(file);
}

std::string schema_type(const Column& column) {
  switch (column.type) {
    case ValueType::text: return "string";
    case ValueType::integer: return "integer";
    case ValueType::number: return "number";
    case ValueType::boolean: return "boolean";
  }
  return "?";
}

TEST(RecordSchema, EveryKindHasTheSchemasColumnsInOrderWithTypeAndUnit) {
  const nlohmann::ordered_json schema = records_schema();
  const nlohmann::ordered_json& kinds = schema.at("$defs");
  std::set<std::string> seen;
  for (const RecordKind* kind : record_kinds()) {
    SCOPED_TRACE(std::string(kind->name));
    seen.insert(std::string(kind->name));
    ASSERT_TRUE(kinds.contains(std::string(kind->name))) << "the schema has no kind " << kind->name;
    const nlohmann::ordered_json& defined = kinds.at(std::string(kind->name));
    EXPECT_EQ(defined.at("x-document-key"), std::string(kind->plural));
    const nlohmann::ordered_json& properties = defined.at("properties");
    ASSERT_EQ(properties.size(), kind->columns.size());
    std::size_t i = 0;
    for (const auto& [name, property] : properties.items()) {
      const Column& column = kind->columns[i++];
      EXPECT_EQ(name, std::string(column.name)) << "column " << i;
      const nlohmann::ordered_json expected_type =
          column.nullable ? nlohmann::ordered_json::array({schema_type(column), "null"})
                          : nlohmann::ordered_json(schema_type(column));
      EXPECT_EQ(property.at("type"), expected_type) << name;
      EXPECT_EQ(property.value("x-unit", std::string()), std::string(column.unit)) << name;
      EXPECT_FALSE(property.value("description", std::string()).empty()) << name << " has no description";
    }
  }
  for (const auto& [name, defined] : kinds.items()) EXPECT_TRUE(seen.count(name)) << "no C++ kind for " << name;
}

TEST(Record, ACsvLineFollowsItsKindsColumns) {
  const RecordKind& checks = record_kind("check");
  EXPECT_EQ(csv_header(checks),
            "kind,phase,round,node_a,node_b,nodes,measured_gbps,expected_gbps,result,reason");
  const Record slow{&checks,
                    {std::string("pair"), std::string("first rounds"), std::int64_t{2}, std::string("n1"),
                     std::string("n,2"), std::string(""), 12.3456789, FieldValue{}, std::string("slow"),
                     std::string("")},
                    {}};
  // 6 significant digits for the check's figures; an empty value stays empty; text quoted.
  EXPECT_EQ(csv_record_line(slow, checks), "pair,first rounds,2,n1,\"n,2\",,12.3457,,slow,");
}

TEST(Record, ABooleanColumnIsWrittenTrueOrFalse) {
  const RecordKind& cells = record_kind("cell");
  std::size_t flagged = 0;
  while (cells.columns[flagged].name != "flagged") ++flagged;
  EXPECT_EQ(cells.columns[flagged].type, ValueType::boolean);
  EXPECT_EQ(csv_cell(std::int64_t{1}, cells.columns[flagged]), "true");
  EXPECT_EQ(csv_cell(std::int64_t{0}, cells.columns[flagged]), "false");
}

TEST(Record, AnotherKindsRecordOrAWrongValueCountIsRefused) {
  const Record short_record{&record_kind("check"), {std::string("node")}, {}};
  EXPECT_THROW(record_fields(short_record), BackendError);
  const Record cell_as_check{&record_kind("cell"), {}, {}};
  EXPECT_THROW(csv_record_line(cell_as_check, record_kind("check")), BackendError);
  EXPECT_THROW(record_kind("nonesuch"), BackendError);
}

TEST(Record, ARowRecordKeepsEveryRowColumnAndItsExtras) {
  ResultRow row;
  row.backend = "mpi";
  row.extra = {ExtraField{"group", std::int64_t{3}}};
  const Record record = row_record(row);
  EXPECT_EQ(record.kind, &record_kind("row"));
  EXPECT_EQ(record.values.size(), row_columns().size());
  EXPECT_EQ(std::get<std::string>(record.values.front()), "mpi");
  const std::vector<std::string> extra{"group"};
  const std::string line = csv_record_line(record, record_kind("row"), extra);
  EXPECT_EQ(line.substr(line.rfind(',')), ",3");
}

}  // namespace
// bench-patterns' CSV: steps and collective types in one file, told apart by `record`.
TEST(Record, AMixedCsvNamesEachLinesKindAndSharesAColumnOfOneName) {
  const std::array<const RecordKind*, 2> kinds{&record_kind("type"), &record_kind("step")};
  const std::vector<std::string_view> columns = mixed_csv_columns(kinds);
  // Every type column, then the step's own; exposed_seconds (in both kinds) once.
  EXPECT_EQ(columns.size(), record_kind("type").columns.size() + record_kind("step").columns.size() - 1);
  EXPECT_EQ(std::count(columns.begin(), columns.end(), "exposed_seconds"), 1);
  EXPECT_EQ(columns.front(), "type");
  EXPECT_EQ(columns.back(), "unattributed_exposed_seconds");
  const std::vector<std::string> extra;
  const std::string header = mixed_csv_header(kinds, extra);
  EXPECT_EQ(header.substr(0, 17), "record,type,kind,");

  const Record step{&record_kind("step"), {std::int64_t{3}, 0.5, 0.25, 0.375, 0.3, 0.25, 0.125}, {}};
  const std::string line = mixed_csv_record_line(step, kinds, extra);
  std::vector<std::string> cells;
  std::size_t start = 0;
  for (std::size_t comma = line.find(','); comma != std::string::npos; comma = line.find(',', start)) {
    cells.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
  cells.push_back(line.substr(start));
  ASSERT_EQ(cells.size(), columns.size() + 1);
  const auto cell = [&](std::string_view name) {
    return cells[1 + static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) - columns.begin())];
  };
  EXPECT_EQ(cells[0], "step");
  EXPECT_EQ(cell("step"), "3");
  EXPECT_EQ(cell("exposed_seconds"), "0.25");
  EXPECT_EQ(cell("unattributed_exposed_seconds"), "0.125");
  EXPECT_EQ(cell("type"), "");
  EXPECT_EQ(cell("bytes"), "");

  const Record link{&record_kind("link"), {}, {}};
  EXPECT_THROW(mixed_csv_record_line(link, kinds, extra), BackendError);
}

}  // namespace commbench
