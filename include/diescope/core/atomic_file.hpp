// Reports are written atomically: to a temporary file in the same folder, flushed, then renamed
// over the destination, so a reader never sees half a report and a crash leaves the old one.
#pragma once

#include <filesystem>
#include <string_view>

namespace diescope {

// Throws Error naming the path and the system's reason on failure; the temporary is removed.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace diescope
