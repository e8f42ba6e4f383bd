#include "diescope/report/renderer.hpp"

#include <optional>

#include "diescope/core/atomic_file.hpp"
#include "diescope/core/error.hpp"
#include "diescope/report/report.hpp"
#include "diescope/report/samples_csv.hpp"

namespace diescope::report {

namespace {

[[noreturn]] void throw_no_recording(const Renderer& r) {
  throw core::UsageError("the " + r.name() + " output shows each sample, and a report.json holds none",
                         "run `diescope report` on the recording itself for that output");
}

}  // namespace

std::string MultiRenderer::name() const {
  std::string names;
  for (const auto& r : renderers_) names += (names.empty() ? "" : "+") + r->name();
  return names;
}

bool MultiRenderer::needs_recording() const {
  for (const auto& r : renderers_)
    if (r->needs_recording()) return true;
  return false;
}

void MultiRenderer::render(const ReportInput& input) {
  // Check every renderer can run before any writes, so a bad combination leaves no half output.
  if (!input.recording)
    for (const auto& r : renderers_)
      if (r->needs_recording()) throw_no_recording(*r);
  std::vector<SampleRenderer*> walkers;
  for (const auto& r : renderers_) {
    if (auto* walker = dynamic_cast<SampleRenderer*>(r.get()))
      walkers.push_back(walker);
    else
      r->render(input);
  }
  if (walkers.empty()) return;
  for (SampleRenderer* w : walkers) w->begin(input);
  walk_samples(*input.recording, input.analysis, [&walkers](const WalkedSample& sample) {
    for (SampleRenderer* w : walkers) w->sample(sample);
  });
  for (SampleRenderer* w : walkers) w->finish(input);
}

std::vector<SampleRenderer*> MultiRenderer::sample_renderers() const {
  std::vector<SampleRenderer*> walkers;
  for (const auto& r : renderers_)
    if (auto* walker = dynamic_cast<SampleRenderer*>(r.get())) walkers.push_back(walker);
  return walkers;
}

void MultiRenderer::render_documents(const ReportInput& input) {
  for (const auto& r : renderers_)
    if (!dynamic_cast<SampleRenderer*>(r.get())) r->render(input);
}

void SampleRenderer::render(const ReportInput& input) {
  if (!input.recording) throw_no_recording(*this);
  begin(input);
  walk_samples(*input.recording, input.analysis,
               [this](const WalkedSample& sample) { this->sample(sample); });
  finish(input);
}

void JsonRenderer::render(const ReportInput& input) {
  core::write_file_atomically(path_, dump_report(input.report));
}

struct CsvRenderer::State {
  explicit State(const std::filesystem::path& path) : file(path) {}
  core::AtomicFileWriter file;
  std::optional<SamplesCsvWriter> csv;
};

CsvRenderer::CsvRenderer(std::filesystem::path path, double smooth_s)
    : path_(std::move(path)), smooth_s_(smooth_s) {}
CsvRenderer::~CsvRenderer() = default;

void CsvRenderer::begin(const ReportInput& input) {
  state_ = std::make_unique<State>(path_);
  State* st = state_.get();
  st->csv.emplace(
      input.recording->meta(), input.analysis, [st](std::string_view piece) { st->file.write(piece); },
      smooth_s_);
}

void CsvRenderer::sample(const WalkedSample& walked) {
  state_->csv->row(walked);
}

void CsvRenderer::finish(const ReportInput&) {
  state_->csv->finish();
  state_->file.commit();
  state_.reset();
}

}  // namespace diescope::report
