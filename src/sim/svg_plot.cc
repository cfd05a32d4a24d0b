// A self-contained SVG line plot with error bars over categorical x values.
#include "sim/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace tiresias {
namespace {

constexpr std::array<const char*, 8> kColours = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                 "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// A round tick step giving about `n` ticks over `range`.
double TickStep(double range, int n) {
  if (!(range > 0)) return 1;
  const double raw = range / n;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

std::string Num(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e6 || a < 1e-3) return fmt::format("{:.3g}", v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

}  // namespace

std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderSvg(const LinePlot& p, int width, int height) {
  const double left = 80, right = 180, top = 40, bottom = 110;
  const double pw = width - left - right, ph = height - top - bottom;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& s : p.series) {
    for (size_t i = 0; i < s.y.size(); ++i) {
      for (double v :
           {s.y[i], i < s.lo.size() ? s.lo[i] : s.y[i], i < s.hi.size() ? s.hi[i] : s.y[i]}) {
        if (std::isfinite(v)) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
    }
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi - lo < 1e-12) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double step = TickStep(hi - lo, 6);
  lo = std::floor(lo / step) * step;
  hi = std::ceil(hi / step) * step;
  const size_t nx = std::max<size_t>(p.x.size(), 1);
  auto X = [&](size_t i) { return left + pw * (static_cast<double>(i) + 0.5) / nx; };
  auto Y = [&](double v) { return top + ph * (1 - (v - lo) / (hi - lo)); };

  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
      width, height, width, height, left + pw / 2, XmlEscape(p.title));
  // Grid and y ticks.
  for (double v = lo; v <= hi + step / 2; v += step) {
    o += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        left, Y(v), left + pw, Y(v), left - 6, Y(v) + 4, Num(v));
  }
  o += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
      "stroke=\"#333\"/>\n",
      left, top, pw, ph);
  // Category labels: level when they fit their slot (about 7 px a character), else slanted.
  size_t longest = 0;
  for (const auto& x : p.x) longest = std::max(longest, x.size());
  const bool slant = static_cast<double>(longest) * 7 > pw / static_cast<double>(nx);
  for (size_t i = 0; i < p.x.size(); ++i) {
    if (slant) {
      o += fmt::format(
          "<text x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"end\" font-size=\"10\" "
          "transform=\"rotate(-30 {0:.1f} {1:.1f})\">{2}</text>\n",
          X(i), top + ph + 14, XmlEscape(p.x[i]));
    } else {
      o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", X(i),
                       top + ph + 18, XmlEscape(p.x[i]));
    }
  }
  o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                   left + pw / 2, top + ph + 95, XmlEscape(p.x_label));
  o += fmt::format(
      "<text x=\"16\" y=\"{:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {:.1f})\">{}"
      "</text>\n",
      top + ph / 2, top + ph / 2, XmlEscape(p.y_label));
  // Series: line, error bars, markers, legend.
  for (size_t k = 0; k < p.series.size(); ++k) {
    const auto& s = p.series[k];
    const char* c = kColours[k % kColours.size()];
    std::string path;
    for (size_t i = 0; i < s.y.size() && i < p.x.size(); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", X(i), Y(s.y[i]));
    }
    if (!path.empty()) {
      o += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                       c, path);
    }
    for (size_t i = 0; i < s.y.size() && i < p.x.size(); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      const double l = i < s.lo.size() ? s.lo[i] : s.y[i], h = i < s.hi.size() ? s.hi[i] : s.y[i];
      if (std::isfinite(l) && std::isfinite(h) && h > l) {
        o += fmt::format(
            "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"/>\n"
            "<line x1=\"{4:.1f}\" y1=\"{1:.1f}\" x2=\"{5:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\"/>\n"
            "<line x1=\"{4:.1f}\" y1=\"{2:.1f}\" x2=\"{5:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"/>\n",
            X(i), Y(l), Y(h), c, X(i) - 4, X(i) + 4);
      }
      o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>\n", X(i),
                       Y(s.y[i]), c);
    }
    const double ly = top + 14 + 20.0 * static_cast<double>(k);
    o += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"2\"/>\n<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        left + pw + 12, ly, left + pw + 36, ly, c, left + pw + 42, ly + 4, XmlEscape(s.name));
  }
  o += "</svg>\n";
  return o;
}

}  // namespace tiresias
