#pragma once
// Whole-or-nothing file writes, for run files, caches and exported pictures.
#include <filesystem>
#include <string>

namespace normlab {

// Writes `contents` to `path` via a temp file beside it, fsync and rename, so after a
// crash the name holds the old file or the whole new one; UserError on failure.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

}  // namespace normlab
