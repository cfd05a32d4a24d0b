// The simulator's report as one self-contained HTML file (see html_report.h).
#include "cli/html_report.h"

#include <fmt/format.h>

#include "api/dashboard.h"
#include "common/atomic_file.h"
#include "sim/svg_plot.h"

namespace tiresias {
namespace {

std::string_view Asset(std::string_view path) {
  for (const WebAsset& a : DashboardAssets()) {
    if (a.path == path) return a.body;
  }
  return {};
}

}  // namespace

std::string HtmlReport(const nlohmann::json& data, const std::string& text_tables) {
  // In a <script> block only "</script" or "<!--" could end or disturb it: every '<' of the
  // JSON (only ever inside strings) becomes the JSON escape \u003c.
  std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(json.size());
  for (char c : json) safe += c == '<' ? std::string("\\u003c") : std::string(1, c);
  const std::string_view script = Asset("/report.js"), style = Asset("/report.css");
  const std::string title = XmlEscape(data.value("title", std::string("tiresias report")));
  std::string page = fmt::format(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style></head>\n<body>\n"
      "<h1 id=\"title\">{}</h1><p id=\"subtitle\" class=\"note\"></p>\n"
      "<h2>Summary</h2><div id=\"summary\"></div>\n"
      "<h2>JCT and queueing delay</h2><div id=\"cdfs\"></div>\n"
      "<h2>Mean JCT by job size</h2><div id=\"sizes\"></div>\n"
      "<h2>Over time</h2><div id=\"time\"></div>\n",
      title, style, title);
  if (script.empty()) {
    page += fmt::format(
        "<p class=\"note\">This tiresias was built without npm, so the report has no charts; "
        "the tables follow, and all the data is in the JSON block of this file.</p>\n<pre>{}"
        "</pre>\n",
        XmlEscape(text_tables));
  }
  page += "<script id=\"report-data\" type=\"application/json\">" + safe + "</script>\n";
  if (!script.empty()) page += "<script>" + std::string(script) + "</script>\n";
  page += "</body></html>\n";
  return page;
}

Status WriteHtmlReport(const std::string& path, const nlohmann::json& data,
                       const std::string& text_tables) {
  return WriteFileAtomically(path, HtmlReport(data, text_tables), /*durable=*/false);
}

}  // namespace tiresias
