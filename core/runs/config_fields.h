#pragma once
// Every setting of a run described once: its name in files and on the command line,
// its label, help, range and widget. Validation, the command line (usage included),
// run files and the settings panel all work from this table, so a new setting is a
// member in TrainConfig plus a row in config_fields() (core/runs/config_fields.cpp).
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "config.h"

namespace normlab {

// The control the settings panel builds for a field.
enum class Widget {
  Buttons,      // one radio button per choice, with its formula
  Rate,         // editable list offering `suggestions`, typed as 6e-3 or 0.0006
  WholeNumber,  // spin box
  Decimal,      // spin box with decimals
  Menu,         // drop-down list of the choices
  File,         // a file, or empty for the built-in default
  None,         // not shown: kept from the last config set
};

// Where the settings panel shows a field; the panel lays sections out in this order.
enum class Section { Placement, Schedule, Model, Training, DeviceAndData, Hidden };

// The member a field reads and writes. One alternative per value type in TrainConfig.
template <typename T>
using Member = T& (*)(TrainConfig&);
using FieldMember = std::variant<Member<int>, Member<std::uint64_t>, Member<double>, Member<std::string>,
                                 Member<NormPlacement>, Member<NormType>, Member<Switch>>;

struct Choice {
  std::string name;     // in files and on the command line
  std::string label;    // in the settings panel
  std::string formula;  // shown beside the label, if any
  std::string help;     // the choice's tooltip, if any
};

struct ConfigField {
  std::string key;    // JSON key in run files, and the saved-settings key
  std::string flag;   // command line: --flag
  std::string label;  // settings panel
  std::string noun;   // how messages name it: "batch size must be between 1 and 4096"
  std::string help;   // --help and the control's tooltip
  Section section;
  Widget widget;
  double min = 0, max = 0;               // numbers: the accepted range
  bool above_min = false;                // numbers: min itself is refused, as 0 for a learning rate
  std::vector<Choice> choices;           // names and enums: every accepted value, in the enum's order
  std::vector<std::string> suggestions;  // rates: the values the list offers
  std::string unit;                      // shown after the number, " step(s)": "(s)" only when it is not 1
  std::string zero_text;                 // what 0 stands for, e.g. "off"
  double step = 1;                       // decimals: the spin box's step
  int since_version = 1;                 // run files of an older version lack it and load the default,
  std::string older_files_text;          // or this value, when what they ran with was not today's default
  // False for settings that change how fast a run goes or what it records, not what it
  // learns (threads, device, layer statistics): runs differing only there are one experiment.
  bool shapes_result = true;
  bool in_design_name = false;  // said by design_name (config.h), so a run's title says it first
  FieldMember member;
};

// In the settings panel's order.
const std::vector<ConfigField>& config_fields();
const ConfigField& config_field(const std::string& key);  // by its JSON key; throws std::out_of_range

// "between 1 and 64", "above 0 and at most 1", "'pre' or 'post'": what the field takes.
std::string accepted_values(const ConfigField& field);
// UserError when the field's value is out of range or not one of its choices.
void check_field(const ConfigField& field, const TrainConfig& config);

// The value as text, as a user types it and files keep it: "0.006", "post", "128", "0.25".
std::string field_text(const ConfigField& field, const TrainConfig& config);
// The value as the screen writes it: field_text, but a number under 0.01 as the course
// writes a learning rate ("6e-3", as run names say it) where that form says it exactly.
std::string shown_text(const ConfigField& field, const TrainConfig& config);
// Reads text of that form; UserError naming the field when it is not a value of its type.
void set_field_text(const ConfigField& field, TrainConfig& config, const std::string& text);
void copy_field(const ConfigField& field, const TrainConfig& from, TrainConfig& to);
// Every field of the section: the course experiment takes its device and data this way.
void copy_section(Section section, const TrainConfig& from, TrainConfig& to);
// Whether every field that shapes the result reads the same in both: the same
// experiment, whatever its name, device or thread count.
bool same_experiment(const TrainConfig& a, const TrainConfig& b);
// The first field that shapes the result and reads differently in the two; nullptr
// when they are the same experiment.
const ConfigField* first_difference(const TrainConfig& a, const TrainConfig& b);

// The fields whose value reads differently in any two of `configs`, in the table's order:
// what tells the runs apart.
std::vector<const ConfigField*> differing_fields(const std::vector<const TrainConfig*>& configs);

// Calls visit(value) with a reference to the field's member in `config`.
template <typename Config, typename Visit>
decltype(auto) visit_field(const ConfigField& field, Config& config, Visit&& visit) {
  // Reading a const config goes through the same accessor; nothing is written.
  auto& target = const_cast<TrainConfig&>(static_cast<const TrainConfig&>(config));
  return std::visit(
      [&](auto member) -> decltype(auto) {
        if constexpr (std::is_const_v<Config>) return visit(std::as_const(member(target)));
        else return visit(member(target));
      },
      field.member);
}

}  // namespace normlab
