// A self-contained SVG line plot over categorical x values, with one line per series and an
// error bar (interval) at each point: enough for the sweep's plot per knob, written by our
// own code so a report needs no plotting library and no network.
#pragma once

#include <string>
#include <vector>

namespace tiresias {

struct PlotSeries {
  std::string name;
  std::vector<double> y, lo, hi;  // one per x category; NaN = no point there
};

struct LinePlot {
  std::string title, x_label, y_label;
  std::vector<std::string> x;  // categories, left to right
  std::vector<PlotSeries> series;
};

// The plot as an SVG document (no external references).
std::string RenderSvg(const LinePlot& plot, int width = 720, int height = 420);
// Text made safe for XML content and attributes.
std::string XmlEscape(const std::string& s);

}  // namespace tiresias
