#include "perf/run/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tw::perf::run {

namespace {

constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 80, kRight = 160, kTop = 50, kBottom = 60;  // margins
constexpr double kPlotWidth = kWidth - kLeft - kRight, kPlotHeight = kHeight - kTop - kBottom;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

std::string fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// Maps data to pixels on one axis.
struct Scale {
  double low, high, from, to;
  bool log;
  double operator()(double v) const {
    double a = log ? std::log10(std::max(v, 1e-12)) : v, lo = log ? std::log10(low) : low,
           hi = log ? std::log10(high) : high;
    double f = hi > lo ? (a - lo) / (hi - lo) : 0.5;
    return from + f * (to - from);
  }
};

void open_svg(std::ostringstream& out, const std::string& title) {
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << " " << kHeight << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect x=\"0\" y=\"0\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" fill=\"white\"/>\n"
      << "<text x=\"" << kWidth / 2 << "\" y=\"25\" text-anchor=\"middle\" font-size=\"16\">" << xml_escape(title)
      << "</text>\n";
}

void draw_frame(std::ostringstream& out, const std::string& x_label, const std::string& y_label) {
  out << "<line x1=\"" << kLeft << "\" y1=\"" << kTop + kPlotHeight << "\" x2=\"" << kLeft + kPlotWidth << "\" y2=\""
      << kTop + kPlotHeight << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft << "\" y2=\"" << kTop + kPlotHeight
      << "\" stroke=\"black\"/>\n"
      << "<text x=\"" << kLeft + kPlotWidth / 2 << "\" y=\"" << kHeight - 15 << "\" text-anchor=\"middle\">"
      << xml_escape(x_label) << "</text>\n"
      << "<text x=\"20\" y=\"" << kTop + kPlotHeight / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 20 "
      << kTop + kPlotHeight / 2 << ")\">" << xml_escape(y_label) << "</text>\n";
}

void draw_y_ticks(std::ostringstream& out, const Scale& y, const std::vector<double>& ticks) {
  for (double tick : ticks) {
    double py = y(tick);
    out << "<line x1=\"" << kLeft - 5 << "\" y1=\"" << fixed(py) << "\" x2=\"" << kLeft + kPlotWidth << "\" y2=\""
        << fixed(py) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << kLeft - 8 << "\" y=\"" << fixed(py + 4) << "\" text-anchor=\"end\">" << short_number(tick)
        << "</text>\n";
  }
}

// Powers of ten and their 2x / 5x inside [low, high], for a log axis.
std::vector<double> log_ticks(double low, double high) {
  std::vector<double> ticks;
  for (double decade = std::pow(10, std::floor(std::log10(low))); decade <= high; decade *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (decade * m >= low * 0.999 && decade * m <= high * 1.001) ticks.push_back(decade * m);
  return ticks;
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double low, double high, int count) {
  if (!(high > low)) high = low + 1;
  double raw = (high - low) / std::max(count, 1);
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (magnitude * m >= raw) {
      step = magnitude * m;
      break;
    }
  // The last tick is the first at or above `high`, so the axis covers every point.
  std::vector<double> ticks;
  for (double t = std::ceil(low / step) * step;; t += step) {
    ticks.push_back(t);
    if (t >= high - step * 1e-9) break;
  }
  return ticks;
}

std::string short_number(double value) {
  char text[32];
  double magnitude = std::fabs(value);
  if (magnitude >= 1e6) std::snprintf(text, sizeof text, "%gM", value / 1e6);
  else if (magnitude >= 1e3) std::snprintf(text, sizeof text, "%gK", value / 1e3);
  else std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string render_svg(const LineChart& chart) {
  double x_low = 1e300, x_high = -1e300, y_high = 0;
  for (const Series& s : chart.series)
    for (const Point& p : s.points) {
      x_low = std::min(x_low, p.x);
      x_high = std::max(x_high, p.x);
      y_high = std::max(y_high, p.y);
    }
  if (x_low > x_high) x_low = 1, x_high = 10;
  bool log_x = chart.log_x && x_low > 0;
  if (x_low == x_high) x_low = log_x ? x_low / 2 : x_low - 1, x_high = log_x ? x_high * 2 : x_high + 1;
  std::vector<double> y_ticks = nice_ticks(0, y_high > 0 ? y_high * 1.05 : 1, 6);
  Scale x{x_low, x_high, kLeft + 20, kLeft + kPlotWidth - 20, log_x};
  Scale y{0, y_ticks.back(), kTop + kPlotHeight, kTop, false};

  std::ostringstream out;
  open_svg(out, chart.title);
  draw_y_ticks(out, y, y_ticks);
  std::vector<double> x_ticks = log_x ? log_ticks(x_low, x_high) : nice_ticks(x_low, x_high, 6);
  for (double tick : x_ticks)
    out << "<text x=\"" << fixed(x(tick)) << "\" y=\"" << kTop + kPlotHeight + 18 << "\" text-anchor=\"middle\">"
        << short_number(tick) << "</text>\n";
  draw_frame(out, chart.x_label, chart.y_label);
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    const char* color = kColors[i % std::size(kColors)];
    out << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
    for (const Point& p : s.points) out << fixed(x(p.x)) << "," << fixed(y(p.y)) << " ";
    out << "\"/>\n";
    for (const Point& p : s.points)
      out << "<circle cx=\"" << fixed(x(p.x)) << "\" cy=\"" << fixed(y(p.y)) << "\" r=\"3\" fill=\"" << color
          << "\"/>\n";
    double ly = kTop + 10 + 20.0 * static_cast<double>(i);
    out << "<line x1=\"" << kWidth - kRight + 15 << "\" y1=\"" << ly << "\" x2=\"" << kWidth - kRight + 40
        << "\" y2=\"" << ly << "\" stroke=\"" << color << "\" stroke-width=\"2\"/>\n"
        << "<text x=\"" << kWidth - kRight + 45 << "\" y=\"" << ly + 4 << "\">" << xml_escape(s.name) << "</text>\n";
  }
  out << "</svg>\n";
  return out.str();
}

std::string render_svg(const BarChart& chart) {
  double y_high = 0;
  for (double v : chart.values) y_high = std::max(y_high, v);
  std::vector<double> y_ticks = nice_ticks(0, y_high > 0 ? y_high * 1.05 : 1, 6);
  Scale y{0, y_ticks.back(), kTop + kPlotHeight, kTop, false};
  std::ostringstream out;
  open_svg(out, chart.title);
  draw_y_ticks(out, y, y_ticks);
  size_t n = std::max<size_t>(chart.values.size(), 1);
  double slot = kPlotWidth / static_cast<double>(n);
  for (size_t i = 0; i < chart.values.size(); ++i) {
    double left = kLeft + slot * static_cast<double>(i) + slot * 0.15, top = y(chart.values[i]);
    out << "<rect x=\"" << fixed(left) << "\" y=\"" << fixed(top) << "\" width=\"" << fixed(slot * 0.7)
        << "\" height=\"" << fixed(kTop + kPlotHeight - top) << "\" fill=\"" << kColors[0] << "\"/>\n";
    std::string label = i < chart.labels.size() ? chart.labels[i] : std::to_string(i + 1);
    out << "<text x=\"" << fixed(left + slot * 0.35) << "\" y=\"" << kTop + kPlotHeight + 18
        << "\" text-anchor=\"middle\">" << xml_escape(label) << "</text>\n";
  }
  draw_frame(out, "", chart.y_label);
  out << "</svg>\n";
  return out.str();
}

}  // namespace tw::perf::run
