// Small SVG charts drawn by hand (no library): a line chart of latency
// percentiles against rate, and a bar chart of rate per run.
#pragma once
#include <string>
#include <vector>

namespace tw::perf::run {

struct Point {
  double x = 0;
  double y = 0;
};

struct Series {
  std::string name;
  std::vector<Point> points;
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = true;  // rates span decades
  std::vector<Series> series;
};

struct BarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> labels;
  std::vector<double> values;
};

std::string render_svg(const LineChart& chart);
std::string render_svg(const BarChart& chart);

// Escapes &, <, >, " for text and attribute values.
std::string xml_escape(const std::string& text);
// Round numbers for axis ticks covering [low, high]: about `count` of them.
std::vector<double> nice_ticks(double low, double high, int count);
// "1.5K", "100K", "2M" for axis labels.
std::string short_number(double value);

}  // namespace tw::perf::run
