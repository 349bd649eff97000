#pragma once
// Whole-or-nothing file writes, for run files, caches and exported pictures; and the
// whole-file read that small text files (a sweep's description) come back with.
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

namespace normlab {

// Writes `contents` to `path` via a temp file beside it, fsync and rename, so after a
// crash the name holds the old file or the whole new one; UserError on failure.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

// The same, with the contents streamed by `write` into the temp file through a small
// buffer, so a large file is never held whole in memory. A failed write (full disk)
// fails the stream; the UserError names its reason. An exception `write` throws removes
// the temp file and propagates.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

// The file's contents; UserError naming it and why when it cannot be read.
std::string read_whole_file(const std::filesystem::path& path);

}  // namespace normlab
