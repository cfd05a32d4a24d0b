// The simulator's report as one self-contained HTML file (`sim|compare --report FILE`): the
// data (sim/report_data.h) in a JSON block, and the page's script and style (web/src/report.*,
// with uPlot, bundled at build time and compiled in with the dashboard) inlined, so the file
// opens offline and fetches nothing. A build without npm writes the tables as text instead of
// charts, and says so.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace tiresias {

// The page; `text_tables` is shown as a fallback when the build has no bundled script.
std::string HtmlReport(const nlohmann::json& data, const std::string& text_tables);
Status WriteHtmlReport(const std::string& path, const nlohmann::json& data,
                       const std::string& text_tables);

}  // namespace tiresias
