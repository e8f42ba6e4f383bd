// docs/attribution.md#user-labels
#include "diescope/attribution/labels.hpp"

#include <array>
#include <cctype>
#include <fstream>

#include <fmt/format.h>

#include "diescope/core/error.hpp"

namespace diescope::attribution {
namespace {

// Names diescope sets itself on a series or a record: a user label may not shadow them.
constexpr std::array<std::string_view, 17> kReserved = {
    "pod",        "namespace",    "container", "pod_uid",       "slurm_job",        "slurm_step",
    "slurm_user", "container_id", "gpu",       "UUID",          "modelName",        "Hostname",
    "pci_bus_id", "device",       "GPU_I_ID",  "GPU_I_PROFILE", "container_runtime"};

bool valid_key(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key[0]))) return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return key.substr(0, 2) != "__";  // Prometheus keeps names starting with __ for itself
}

// The longest prefix of at most `limit` bytes that ends on a UTF-8 character boundary.
std::size_t utf8_cut(const std::string& s, std::size_t limit) {
  if (s.size() <= limit) return s.size();
  std::size_t at = limit;
  while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return at;
}

}  // namespace

Label parse_label(std::string_view text, std::vector<std::string>& notes) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos)
    throw core::UsageError(fmt::format("label \"{}\" has no '='", text.substr(0, 80)),
                           "give each label as KEY=VALUE, e.g. --label team=vision");
  Label label{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
  if (!valid_key(label.key))
    throw core::UsageError(fmt::format("label key \"{}\" is not a valid label name", label.key.substr(0, 80)),
                           "use letters, digits and underscores, not starting with a digit or two "
                           "underscores, e.g. team=vision");
  for (std::string_view r : kReserved)
    if (label.key == r)
      throw core::UsageError(fmt::format("label key \"{}\" is one diescope sets itself", label.key),
                             "pick another key, e.g. user_" + label.key);
  bool replaced = false;
  for (char& c : label.value) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      c = ' ';
      replaced = true;
    }
  }
  if (replaced)
    notes.push_back(fmt::format("label {}: control characters (newlines, tabs) became spaces", label.key));
  if (label.value.size() > kMaxLabelValueBytes) {
    notes.push_back(fmt::format(
        "label {}: its value of {} bytes was cut to the first {} (docs/attribution.md#user-labels)",
        label.key, label.value.size(), kMaxLabelValueBytes));
    label.value.resize(utf8_cut(label.value, kMaxLabelValueBytes));
  }
  return label;
}

LabelSet parse_labels(const std::vector<std::string>& texts) {
  LabelSet set;
  for (const std::string& t : texts) {
    Label l = parse_label(t, set.notes);
    bool replaced = false;
    for (Label& existing : set.labels) {
      if (existing.key == l.key) {
        existing.value = l.value;  // the last one given wins, as with any repeated option
        replaced = true;
      }
    }
    if (!replaced) set.labels.push_back(std::move(l));
  }
  if (set.labels.size() > kMaxLabels)
    throw core::UsageError(
        fmt::format("{} labels were given; at most {} are kept", set.labels.size(), kMaxLabels),
        "give fewer labels (each one multiplies nothing, but every record carries them)");
  return set;
}

LabelSet read_labels_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in)
    throw core::InputError(path.string(), 0, "cannot read the labels file",
                           "check the path; the file holds one KEY=VALUE a line");
  std::vector<std::string> texts;
  std::string line;
  int number = 0;
  LabelSet set;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    try {
      std::vector<std::string> one{line.substr(first)};
      LabelSet parsed = parse_labels(one);
      for (Label& l : parsed.labels) {
        std::erase_if(set.labels, [&l](const Label& e) { return e.key == l.key; });
        set.labels.push_back(std::move(l));
      }
      for (std::string& n : parsed.notes) set.notes.push_back(std::move(n));
    } catch (const core::Error& e) {
      throw core::InputError(path.string(), number, e.cause(), e.fix());
    }
  }
  if (set.labels.size() > kMaxLabels)
    throw core::InputError(
        path.string(), 0,
        fmt::format("it holds {} labels; at most {} are kept", set.labels.size(), kMaxLabels),
        "keep fewer labels in the file");
  return set;
}

}  // namespace diescope::attribution
