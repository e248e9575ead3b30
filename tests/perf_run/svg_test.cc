// The SVG charts are parsed back: well-formed XML (balanced tags, quoted
// attributes), one line and one marker per point, legend and labels present.
#include <gtest/gtest.h>

#include <regex>

#include "perf/run/svg.h"

namespace tw::perf::run {
namespace {

// A minimal XML check: every tag closes in order, attributes are quoted, no
// stray '<' or '&' in text. Returns the element names in document order.
std::vector<std::string> parse_elements(const std::string& xml, std::string& problem) {
  std::vector<std::string> stack, elements;
  size_t i = 0;
  if (xml.rfind("<?xml", 0) == 0) i = xml.find("?>") + 2;
  while (i < xml.size()) {
    size_t open = xml.find('<', i);
    std::string text = xml.substr(i, open == std::string::npos ? std::string::npos : open - i);
    for (size_t amp = text.find('&'); amp != std::string::npos; amp = text.find('&', amp + 1))
      if (!std::regex_search(text.substr(amp), std::regex("^&(amp|lt|gt|quot);"))) problem = "bare & in text";
    if (text.find('>') != std::string::npos) problem = "bare > in text";
    if (open == std::string::npos) break;
    size_t close = xml.find('>', open);
    if (close == std::string::npos) {
      problem = "unterminated tag";
      break;
    }
    std::string tag = xml.substr(open + 1, close - open - 1);
    if (tag.find('<') != std::string::npos) problem = "'<' inside a tag";
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) problem = "mismatched </" + tag.substr(1) + ">";
      else stack.pop_back();
    } else {
      bool self_closing = tag.back() == '/';
      std::string name = tag.substr(0, tag.find_first_of(" /"));
      if (!std::regex_match(self_closing ? tag.substr(0, tag.size() - 1) : tag,
                            std::regex(R"re(\w+(\s+[\w:-]+="[^"<]*")*\s*)re")))
        problem = "bad attributes in <" + tag + ">";
      elements.push_back(name);
      if (!self_closing) stack.push_back(name);
    }
    i = close + 1;
  }
  if (!stack.empty()) problem = "unclosed <" + stack.back() + ">";
  return elements;
}

size_t count(const std::vector<std::string>& elements, const std::string& name) {
  return static_cast<size_t>(std::count(elements.begin(), elements.end(), name));
}

TEST(Svg, LineChartIsWellFormedWithOneMarkerPerPoint) {
  LineChart chart{"Latency <native> & friends", "rate", "us", true,
                  {{"p50", {{10'000, 20}, {50'000, 25}, {100'000, 40}}},
                   {"p99", {{10'000, 80}, {50'000, 120}, {100'000, 190}}},
                   {"p99.9", {{10'000, 150}, {50'000, 300}, {100'000, 600}}}}};
  std::string svg = render_svg(chart);
  std::string problem;
  auto elements = parse_elements(svg, problem);
  ASSERT_EQ(problem, "") << svg;
  ASSERT_FALSE(elements.empty());
  EXPECT_EQ(elements.front(), "svg");
  EXPECT_EQ(count(elements, "polyline"), 3u);
  EXPECT_EQ(count(elements, "circle"), 9u);
  for (const char* text : {">p50<", ">p99<", ">p99.9<", ">rate<", ">us<", "Latency &lt;native&gt; &amp; friends", ">10K<",
                           ">100K<"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
}

TEST(Svg, PointsStayInsideTheCanvas) {
  LineChart chart{"t", "x", "y", true, {{"s", {{1'000, 0}, {1'000'000, 1e6}}}}};
  std::string svg = render_svg(chart);
  std::regex circle(R"re(<circle cx="([-\d.]+)" cy="([-\d.]+)")re");
  int seen = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it, ++seen) {
    double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
    EXPECT_GE(x, 0);
    EXPECT_LE(x, 720);
    EXPECT_GE(y, 0);
    EXPECT_LE(y, 440);
  }
  EXPECT_EQ(seen, 2);
}

TEST(Svg, BarChartAndEmptyCharts) {
  std::string problem;
  auto bars = parse_elements(render_svg(BarChart{"runs", "msg/s", {"run 1", "run 2"}, {100, 200}}), problem);
  EXPECT_EQ(problem, "");
  EXPECT_EQ(count(bars, "rect"), 3u);  // background + 2 bars
  parse_elements(render_svg(BarChart{}), problem);
  EXPECT_EQ(problem, "");
  parse_elements(render_svg(LineChart{}), problem);
  EXPECT_EQ(problem, "");
  parse_elements(render_svg(LineChart{"one point", "x", "y", true, {{"s", {{5000, 3}}}}}), problem);
  EXPECT_EQ(problem, "");
}

TEST(Svg, TicksAndNumbers) {
  EXPECT_EQ(nice_ticks(0, 100, 5), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  // The axis must reach the highest value, not stop at the tick below it.
  EXPECT_EQ(nice_ticks(0, 9336, 6), (std::vector<double>{0, 2000, 4000, 6000, 8000, 10000}));
  EXPECT_EQ(short_number(2'000'000), "2M");
  EXPECT_EQ(short_number(50'000), "50K");
  EXPECT_EQ(short_number(12.5), "12.5");
  EXPECT_EQ(xml_escape("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
}

}  // namespace
}  // namespace tw::perf::run
