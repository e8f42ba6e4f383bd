// Versions that travel in every file diescope writes. The method version changes whenever anything
// that can change a reported number changes (docs/method.md, "Versioning"); the schema versions
// change with file formats only.
#pragma once

namespace diescope::core {

inline constexpr const char* kToolVersion = "0.1.0";
// diescope's method starts at version 3; docs/method.md#method-versions says what changes it.
inline constexpr int kMethodVersion = 4;
inline constexpr int kReportSchemaVersion = 3;
inline constexpr int kRecordingFormatVersion = 4;
// The oldest recording format version this diescope still reads (docs/recording-format.md#versions).
inline constexpr int kOldestRecordingFormatVersion = 1;

}  // namespace diescope::core
