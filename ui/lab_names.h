#pragma once
// The lab's types (lab/) under the names the widgets use, declared only.
namespace normlab::lab {
class FolderFollower;
class GpuInstaller;
class Lab;
class RunStore;
struct RunEntry;
class TrainingQueue;
}  // namespace normlab::lab

namespace normlab::ui {
using lab::FolderFollower;
using lab::GpuInstaller;
using lab::Lab;
using lab::RunEntry;
using lab::RunStore;
using lab::TrainingQueue;
}  // namespace normlab::ui
