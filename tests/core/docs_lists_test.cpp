// The docs' lists of placements, norm types, switches, layer statistics and sweep presets
// against the engine's tables. A list in README.md or docs/*.md sits between
// <!-- engine-list: KIND --> and <!-- /engine-list: KIND -->; each of its table rows and
// bullets names one entry by its first `code` span ("--" and what follows the first word
// dropped: `--qk-norm on` names qk-norm). A row added to a table, or one taken out, makes
// the list stale and this test fail until the doc says it too.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/runs/config.h"
#include "core/runs/config_fields.h"
#include "core/sweeps/sweep.h"
#include "core/training/layer_stats.h"

namespace normlab::test {
namespace {

namespace fs = std::filesystem;

// Each kind of list, and the names the engine's table gives it.
std::map<std::string, std::vector<std::string>> engine_lists() {
  std::map<std::string, std::vector<std::string>> lists;
  for (const PlacementInfo& row : kPlacements) lists["placements"].push_back(row.name);
  for (const NormTypeInfo& row : kNormTypes) lists["norm-types"].push_back(row.name);
  for (const ConfigField& field : config_fields()) {
    if (std::holds_alternative<Member<Switch>>(field.member)) lists["switches"].push_back(field.flag);
  }
  for (const StatisticInfo& row : layer_statistics()) lists["statistics"].push_back(row.name);
  for (const SweepPresetInfo& row : kSweepPresets) lists["sweep-presets"].push_back(row.name);
  return lists;
}

struct Region {
  std::string where;  // "docs/designs.md"
  std::string kind;
  std::string text;
};

std::vector<Region> regions_in(const std::string& where, const std::string& text) {
  static const std::regex opening("<!-- engine-list: ([a-z-]+) -->");
  std::vector<Region> found;
  for (std::sregex_iterator it(text.begin(), text.end(), opening), end; it != end; ++it) {
    const std::string kind = (*it)[1];
    const std::string closing = "<!-- /engine-list: " + kind + " -->";
    const std::size_t start = std::size_t(it->position() + it->length());
    const std::size_t stop = text.find(closing, start);
    if (stop == std::string::npos) throw std::runtime_error(where + ": engine-list " + kind + " is never closed");
    found.push_back({where, kind, text.substr(start, stop - start)});
  }
  return found;
}

// The names a region lists: the first code span of each table body row and each bullet.
std::vector<std::string> listed(const std::string& region) {
  static const std::regex code("`([^`]+)`");
  std::vector<std::string> names;
  std::istringstream lines(region);
  int table_line = 0;
  for (std::string line; std::getline(lines, line);) {
    const bool row = line.rfind('|', 0) == 0, bullet = line.rfind("- ", 0) == 0;
    table_line = row ? table_line + 1 : 0;
    if ((row && table_line <= 2) || !(row || bullet)) continue;  // a table's header and rule
    const std::string first_cell = row ? line.substr(1, line.find('|', 1) - 1) : line;
    std::smatch match;
    std::string name = std::regex_search(first_cell, match, code) ? match[1].str() : "";
    if (name.rfind("--", 0) == 0) name = name.substr(2);
    name = name.substr(0, name.find(' '));
    names.push_back(name.empty() ? "(no `name` in: " + line + ")" : name);
  }
  return names;
}

// What a region lacks and what it has too many of, or "" when it lists the table's rows.
std::string stale(const std::vector<std::string>& engine, const std::string& region) {
  std::vector<std::string> want = engine, have = listed(region), missing, extra;
  std::sort(want.begin(), want.end());
  std::sort(have.begin(), have.end());
  std::set_difference(want.begin(), want.end(), have.begin(), have.end(), std::back_inserter(missing));
  std::set_difference(have.begin(), have.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::string said;
  for (const auto& name : missing) said += " lacks " + name + ";";
  for (const auto& name : extra) said += " lists " + name + ", which the engine has not;";
  return said;
}

std::vector<Region> doc_regions() {
  const fs::path root = NORMLAB_SOURCE_DIR;
  std::vector<fs::path> files = {root / "README.md"};
  for (const auto& entry : fs::directory_iterator(root / "docs")) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  std::vector<Region> all;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (Region& region : regions_in(fs::relative(file, root).string(), text)) all.push_back(std::move(region));
  }
  return all;
}

TEST(DocsLists, EachListNamesTheEnginesRows) {
  const auto engine = engine_lists();
  for (const Region& region : doc_regions()) {
    ASSERT_TRUE(engine.count(region.kind)) << region.where << ": no engine table is called " << region.kind;
    EXPECT_EQ(stale(engine.at(region.kind), region.text), "")
        << region.where << "'s list of " << region.kind << " is stale: write it again from the engine's table";
  }
}

TEST(DocsLists, EveryTableIsListedInTheDocs) {
  std::map<std::string, int> shown;
  for (const Region& region : doc_regions()) ++shown[region.kind];
  for (const auto& [kind, names] : engine_lists()) {
    EXPECT_GT(names.size(), 1u) << kind << ": the engine's table was not read";
    EXPECT_GE(shown[kind], 1) << "no doc lists the " << kind << " between <!-- engine-list: " << kind << " -->"
                              << " and its closing marker";
  }
}

TEST(DocsLists, AListMissingARowOrWithAnExtraOneIsStale) {
  const std::string table = "| `--norm` | name |\n|---|---|\n| `pre` | Pre-norm |\n| `post` | Post-norm |\n";
  EXPECT_EQ(stale({"pre", "post"}, table), "");
  EXPECT_EQ(stale({"pre", "post", "lns"}, table), " lacks lns;");
  EXPECT_EQ(stale({"pre"}, table), " lists post, which the engine has not;");
  const std::string bullets = "Two switches:\n\n- `--qk-norm on` (QK-norm): ...\n- `--scaled-init on`: ...\n";
  EXPECT_EQ(stale({"qk-norm", "scaled-init"}, bullets), "");
  EXPECT_EQ(listed("| `mix` (default) | a |\n|---|---|\n| no code | b |\n"),
            std::vector<std::string>{"(no `name` in: | no code | b |)"})
      << "the header row is no entry; a row without a name is reported";
}

TEST(DocsLists, AnUnclosedListIsRefused) {
  EXPECT_THROW(regions_in("x.md", "<!-- engine-list: placements -->\n| `pre` |\n"), std::runtime_error);
}

}  // namespace
}  // namespace normlab::test
