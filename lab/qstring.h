#pragma once
// NormLab's core speaks UTF-8 std::string; Qt speaks QString.
#include <QString>
#include <string>

namespace normlab::lab {

inline QString qstr(const std::string& text) { return QString::fromStdString(text); }

}  // namespace normlab::lab
