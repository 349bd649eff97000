#include "headed_file.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "core/data/corpus.h"
#include "core/runs/config_fields.h"

namespace normlab {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A header is a few kB; a file whose first line runs longer is not one of these.
constexpr std::size_t kMaxHeaderBytes = 64 * 1024;

}  // namespace

UserError file_fault(const fs::path& path, const std::string& what) { return UserError(path.string() + ": " + what); }

std::string headed_file_bytes(const FileKind& kind, const nlohmann::ordered_json& fields, std::string_view payload) {
  // In this order, so the file's first bytes say what it is.
  nlohmann::ordered_json header = {{"schema", kind.schema}, {"version", kind.version}};
  for (const auto& [key, value] : fields.items()) header[key] = value;
  header["payload_bytes"] = payload.size();
  header["payload_hash"] = content_hash(payload);
  std::string bytes = header.dump() + '\n';  // one line: dump() escapes any newline inside a string
  bytes.append(payload);
  return bytes;
}

json read_file_header(const FileKind& kind, std::string_view head, std::uint64_t file_size, const fs::path& path,
                      std::size_t& line_bytes) {
  const std::size_t end = head.substr(0, kMaxHeaderBytes).find('\n');
  json header;
  if (end != std::string_view::npos) header = json::parse(head.substr(0, end), nullptr, /*allow_exceptions=*/false);
  if (!header.is_object() || !header.contains("schema") || header.at("schema") != kind.schema) {
    throw file_fault(path, std::string("not a NormLab ") + kind.noun);
  }
  std::uint64_t payload_bytes = 0;
  try {
    const int version = header.at("version").get<int>();
    if (version != kind.version) {
      throw file_fault(path, std::string(kind.noun) + " format version " + std::to_string(version) +
                                 "; this NormLab reads version " + std::to_string(kind.version));
    }
    payload_bytes = header.at("payload_bytes").get<std::uint64_t>();
    header.at("payload_hash").get<std::string>();
  } catch (const json::exception& error) {
    throw file_fault(path, std::string("damaged header (") + error.what() + ")");
  }
  line_bytes = end + 1;
  const std::uint64_t room = file_size - line_bytes;  // the head came from the file: no wrap
  if (payload_bytes > room) {
    throw file_fault(path, "truncated: " + std::to_string(file_size) + " of its " +
                               std::to_string(line_bytes + payload_bytes) + " bytes");
  }
  if (payload_bytes < room) {
    throw file_fault(path, "damaged: " + std::to_string(room - payload_bytes) + " bytes more than its header says");
  }
  return header;
}

json read_file_header(const FileKind& kind, const fs::path& path) {
  std::error_code error;
  const std::uintmax_t size = fs::file_size(path, error);
  if (error) throw file_fault(path, fs::exists(path, error) ? "cannot read its size" : "absent");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_fault(path, "cannot open");
  std::string head(std::min<std::uintmax_t>(size, kMaxHeaderBytes), '\0');
  in.read(head.data(), std::streamsize(head.size()));
  head.resize(std::size_t(in.gcount()));
  std::size_t line_bytes = 0;
  return read_file_header(kind, head, size, path, line_bytes);
}

std::string_view checked_payload(std::string_view bytes, std::size_t line_bytes, const json& header,
                                 const fs::path& path) {
  const std::string_view payload = bytes.substr(line_bytes);
  if (content_hash(payload) != header.at("payload_hash").get<std::string>()) {
    throw file_fault(path, "damaged: its bytes do not match their checksum");
  }
  return payload;
}

nlohmann::ordered_json config_as_text(const TrainConfig& config) {
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  for (const ConfigField& field : config_fields()) fields[field.key] = field_text(field, config);
  return fields;
}

TrainConfig config_from_text(const json& config, const std::string& name, const fs::path& path) {
  TrainConfig c;
  c.name = name;
  try {
    for (const ConfigField& field : config_fields()) {
      if (config.contains(field.key)) set_field_text(field, c, config.at(field.key).get<std::string>());
    }
    validate(c);
  } catch (const UserError& error) {
    throw file_fault(path, std::string("damaged header: ") + error.what());
  } catch (const json::exception& error) {
    throw file_fault(path, std::string("damaged header (") + error.what() + ")");
  }
  return c;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace normlab
