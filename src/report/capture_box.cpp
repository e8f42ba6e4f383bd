// docs/agent.md#what-a-capture-holds: the capture's own box at the top of its report.html.
#include "capture_box.hpp"

#include <cmath>

#include <fmt/format.h>

#include "diescope/core/printable.hpp"

namespace diescope::report::detail {

using nlohmann::json;

namespace {

std::string esc(const std::string& s) {
  return core::markup_escaped(s);
}

std::string text(const json& o, const char* key, const std::string& fallback = "") {
  return o.contains(key) && o.at(key).is_string() ? o.at(key).get<std::string>() : fallback;
}

// The span the cards show: the steady window's results when there is one, else the whole capture's.
const json& span_of(const json& report) {
  const json& w = report.at("window");
  return w.value("found", false) ? w.at("results") : report.at("results");
}

// Energy is the report's own figure and words (docs/energy.md#in-the-report): the steady window's
// when there is one, else the whole capture's. A report.json from before energy has no block.
std::string energy_line(const json& report) {
  for (const json* holder : {&span_of(report), &report}) {
    if (!holder->contains("energy") || !holder->at("energy").is_object()) continue;
    const json& e = holder->at("energy");
    if (e.contains("wording") && e.at("wording").is_string()) return esc(e.at("wording").get<std::string>());
  }
  return "not in this report: it was written before diescope reported energy";
}

}  // namespace

std::string capture_box_html(const json& report) {
  if (!report.contains("capture") || !report.at("capture").is_object()) return {};
  const json& c = report.at("capture");
  std::string out =
      "<style>.capture{background:#fff;border:1px solid #ddd;border-left:4px solid #2471a3;border-radius:6px;"
      "padding:8px 12px;margin:6px 0 12px}.capture .row{margin:3px 0;overflow-wrap:anywhere}.capture "
      ".lbl{display:inline-block;min-width:7.5em;color:#666;font-size:.85em;text-transform:uppercase;"
      "letter-spacing:.04em}.capture "
      ".tag{display:inline-block;background:#eaf2f8;border-radius:3px;padding:0 "
      "5px;margin:1px 4px 1px 0;font-size:.9em}.capture ul{margin:2px "
      "0;padding-left:1.2em;font-size:.85em}.capture "
      "table.nvtx{border-collapse:collapse;font-size:.85em;margin:2px "
      "0 4px 7.5em;max-width:100%}.capture table.nvtx td,.capture table.nvtx th{padding:1px 8px 1px "
      "0;text-align:right}.capture table.nvtx td:first-child,.capture table.nvtx "
      "th:first-child{text-align:left;overflow-wrap:anywhere}</style>\n";
  out += "<div class=\"capture\" id=\"capture\">\n";
  out += fmt::format("<div class=\"row\"><span class=\"lbl\">Trigger</span> <b>rule {}</b> ({}): {}</div>\n",
                     esc(text(c, "rule")), esc(text(c, "condition")), esc(text(c, "trigger")));
  out += fmt::format(
      "<div class=\"row\"><span class=\"lbl\">Captured</span> {:.1f} s of {:g} s from {}; {}</div>\n",
      c.value("captured_s", 0.0), c.value("length_s", 0.0), esc(text(c, "start_utc")), esc(text(c, "ended")));
  out += "<div class=\"row\" id=\"capture-job\"><span class=\"lbl\">Job</span> ";
  if (c.contains("job") && c.at("job").is_object()) {
    const json& j = c.at("job");
    out += "<b>" + esc(text(j, "name")) + "</b> ";
    if (j.contains("labels") && j.at("labels").is_object())
      for (auto it = j.at("labels").begin(); it != j.at("labels").end(); ++it)
        if (it->is_string())
          out += "<span class=\"tag\">" + esc(it.key()) + "=" + esc(it->get<std::string>()) + "</span>";
    if (c.contains("job_left_s") && c.at("job_left_s").is_number())
      out +=
          fmt::format(" &middot; left the GPU {:.1f} s into the capture", c.at("job_left_s").get<double>());
  } else {
    out += "no job held the GPU when the capture started (or attribution is off)";
  }
  out += "</div>\n";
  out += "<div class=\"row\" id=\"capture-verdict\"><span class=\"lbl\">Verdict</span> ";
  const json& span = span_of(report);
  if (span.contains("idle_explained") && span.at("idle_explained").is_object()) {
    const json& x = span.at("idle_explained");
    out += "<b>" + esc(text(x, "wording", text(x, "verdict_reason", "no verdict"))) + "</b>";
  } else {
    out += "no verdict: the capture has no host probes";
  }
  out += "</div>\n";
  out += "<div class=\"row\" id=\"capture-energy\"><span class=\"lbl\">Energy</span> " + energy_line(report) +
         "</div>\n";
  const std::string source = text(c, "chip_source");
  const std::string interval = c.contains("interval_ms") && c.at("interval_ms").is_number()
                                   ? fmt::format(" at {:g} ms", c.at("interval_ms").get<double>())
                                   : std::string();
  out += "<div class=\"row\"><span class=\"lbl\">Chip source</span> " +
         std::string(source == "gpm"
                         ? "NVML GPM: another profiler held the counters, and the capture never takes them"
                     : source == "pm" ? "PM sampling" + interval
                                      : "none: no chip samples") +
         "</div>\n";
  // NVTX ranges of the job (docs/agent.md#nvtx-in-captures): the names with the most time first.
  out += "<div class=\"row\" id=\"capture-nvtx\"><span class=\"lbl\">NVTX</span> " +
         esc(text(c, "nvtx", "not recorded")) + "</div>\n";
  if (c.contains("nvtx_ranges") && c.at("nvtx_ranges").is_array() && !c.at("nvtx_ranges").empty()) {
    out += "<table class=\"nvtx\"><tr><th>range</th><th>count</th><th>total s</th><th>mean ms</th></tr>";
    for (const json& r : c.at("nvtx_ranges")) {
      if (!r.is_object()) continue;
      const long open = r.value("open", 0L);
      out +=
          fmt::format("<tr><td>{}</td><td>{}{}</td><td>{:.3f}</td><td>{:.3f}</td></tr>", esc(text(r, "name")),
                      r.value("count", 0L), open > 0 ? fmt::format(" ({} open at the end)", open) : "",
                      r.value("total_s", 0.0), r.value("mean_ms", 0.0));
    }
    out += "</table>\n";
  }
  if (c.contains("notes") && c.at("notes").is_array() && !c.at("notes").empty()) {
    out += "<ul>";
    for (const json& n : c.at("notes"))
      if (n.is_string()) out += "<li>" + esc(n.get<std::string>()) + "</li>";
    out += "</ul>\n";
  }
  out += "</div>\n";
  return out;
}

}  // namespace diescope::report::detail
