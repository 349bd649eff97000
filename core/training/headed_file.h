#pragma once
// The framing checkpoints and weights files share: one line of JSON, the header, whose
// first keys say which kind of file it is and its format version, then payload_bytes bytes
// of a LibTorch archive whose content hash the header holds. The header names the run and
// gives its config as text, field by field, so a later NormLab reads what it knows.
// No torch in this header.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/runs/config.h"

namespace normlab {

struct FileKind {
  const char* schema;  // "normlab.checkpoint"
  const char* noun;    // "checkpoint", in messages
  int version;         // the format version this NormLab writes and reads
};

// `fields` (after the schema and version, and before the payload's size and hash) and the
// payload, as the file's bytes.
std::string headed_file_bytes(const FileKind& kind, const nlohmann::ordered_json& fields, std::string_view payload);

// The header the bytes `head` (the start of the file at `path`, `file_size` bytes long)
// begin with, and in `line_bytes` the length of its line; the file's size checked against
// it. UserError naming the file and the fault: not this kind of file, another format
// version, a damaged header, truncated or longer than it says.
nlohmann::json read_file_header(const FileKind& kind, std::string_view head, std::uint64_t file_size,
                                const std::filesystem::path& path, std::size_t& line_bytes);

// The header of the file at `path`, reading only its start.
nlohmann::json read_file_header(const FileKind& kind, const std::filesystem::path& path);

// The payload of `bytes`, the whole file at `path` whose header is `header`; UserError when
// it does not match its checksum.
std::string_view checked_payload(std::string_view bytes, std::size_t line_bytes, const nlohmann::json& header,
                                 const std::filesystem::path& path);

// Every config field as text, as a user types it, with the run's name.
nlohmann::ordered_json config_as_text(const TrainConfig& config);
// The config `config_as_text` wrote; fields missing keep their defaults, as in run files.
// UserError (damaged header) on a value that does not read.
TrainConfig config_from_text(const nlohmann::json& config, const std::string& name, const std::filesystem::path& path);

// "PATH: what".
UserError file_fault(const std::filesystem::path& path, const std::string& what);

// LibTorch's messages may run over lines; the first says what went wrong.
std::string first_line(const std::string& text);

}  // namespace normlab
