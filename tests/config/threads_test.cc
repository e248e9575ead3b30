// The thread-tier and delay keys: gateways, access_points, cpus,
// loop_slice_us, delay_max_bytes, delay_bucket_ms. Their ranges, the checks between them,
// and how the TOML file reports them.
#include <gtest/gtest.h>

#include "config/config.h"

namespace tw::config {
namespace {

std::string validate_error(const BrokerConfig& config) {
  auto status = validate(config);
  EXPECT_FALSE(status.ok());
  return status.ok() ? std::string() : status.error().message;
}

std::string toml_error(std::string_view text) {
  auto result = parse_toml(text, "broker.toml");
  EXPECT_FALSE(result.ok()) << "accepted: " << text;
  return result.ok() ? std::string() : result.error().message;
}

TEST(ThreadKeys, DefaultIsSingleThreadedUnpinned) {
  BrokerConfig config;
  EXPECT_EQ(config.gateways, 0u);
  EXPECT_EQ(config.access_points, 0u);
  EXPECT_EQ(config.cpus, "");
  EXPECT_TRUE(single_threaded(config));
  EXPECT_EQ(loop_thread_count(config), 1u);
  EXPECT_EQ(config.delay_max_bytes, 256ull << 20);
  EXPECT_EQ(config.delay_bucket_ms, 1000u);
  EXPECT_EQ(config.loop_slice_us, 100u);
}

TEST(ThreadKeys, ReadFromToml) {
  auto result = parse_toml(
      "gateways = 2\naccess_points = 3\ncpus = \"2-7\"\n"
      "delay_max_bytes = 1048576\ndelay_bucket_ms = 250\n",
      "broker.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->gateways, 2u);
  EXPECT_EQ(result->access_points, 3u);
  EXPECT_EQ(result->cpus, "2-7");
  EXPECT_FALSE(single_threaded(*result));
  EXPECT_EQ(loop_thread_count(*result), 5u);
  EXPECT_EQ(result->delay_max_bytes, 1048576u);
  EXPECT_EQ(result->delay_bucket_ms, 250u);
}

TEST(ThreadKeys, LoopSliceIsZeroForOffOrWithinTheKernelsRange) {
  BrokerConfig config;
  EXPECT_TRUE(set_integer(config, "loop_slice_us", 0).ok());
  EXPECT_EQ(config.loop_slice_us, 0u);
  EXPECT_TRUE(set_integer(config, "loop_slice_us", 100'000).ok());
  EXPECT_EQ(set_integer(config, "loop_slice_us", 99).error().message,
            "must be 0 (off) or between 100 and 100000, got 99");
  EXPECT_EQ(set_integer(config, "loop_slice_us", 100'001).error().message,
            "must be 0 (off) or between 100 and 100000, got 100001");
  EXPECT_EQ(toml_error("loop_slice_us = 1\n"),
            "broker.toml:1: key 'loop_slice_us': must be 0 (off) or between 100 and 100000, got 1");
  auto result = parse_toml("loop_slice_us = 250\n", "broker.toml");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->loop_slice_us, 250u);
  BrokerConfig patched;
  patched.loop_slice_us = 7;
  EXPECT_EQ(validate_error(patched), "key 'loop_slice_us': must be 0 (off) or between 100 and 100000, got 7");
}

TEST(ThreadKeys, RangesAreChecked) {
  BrokerConfig config;
  EXPECT_TRUE(set_integer(config, "gateways", 64).ok());
  EXPECT_EQ(set_integer(config, "gateways", 65).error().message,
            "must be between 0 and 64, got 65");
  EXPECT_EQ(set_integer(config, "access_points", -1).error().message,
            "must be between 0 and 64, got -1");
  EXPECT_TRUE(set_integer(config, "delay_max_bytes", int64_t{1} << 40).ok());
  EXPECT_EQ(set_integer(config, "delay_max_bytes", (int64_t{1} << 20) - 1).error().message,
            "must be between 1048576 and 1099511627776, got 1048575");
  EXPECT_EQ(set_integer(config, "delay_bucket_ms", 9).error().message,
            "must be between 10 and 60000, got 9");
  EXPECT_EQ(set_integer(config, "delay_bucket_ms", 60'001).error().message,
            "must be between 10 and 60000, got 60001");
  EXPECT_EQ(toml_error("delay_bucket_ms = 5\n"),
            "broker.toml:1: key 'delay_bucket_ms': must be between 10 and 60000, got 5");
  EXPECT_EQ(toml_error("cpus = 3\n"), "broker.toml:1: key 'cpus': expected a string");

  BrokerConfig patched;
  patched.delay_max_bytes = 1;
  EXPECT_EQ(validate_error(patched),
            "key 'delay_max_bytes': must be between 1048576 and 1099511627776, got 1");
}

TEST(ThreadKeys, GatewaysAndAccessPointsAreBothZeroOrBothSet) {
  BrokerConfig config;
  config.gateways = 2;
  EXPECT_EQ(validate_error(config),
            "keys 'gateways' and 'access_points': both 0 (single-threaded) or both at least 1, "
            "got gateways = 2, access_points = 0");
  config.gateways = 0;
  config.access_points = 1;
  EXPECT_EQ(validate_error(config),
            "keys 'gateways' and 'access_points': both 0 (single-threaded) or both at least 1, "
            "got gateways = 0, access_points = 1");
  config.gateways = 1;
  EXPECT_TRUE(validate(config).ok());
  // A file is checked once it is read whole, so the order of the keys is free.
  EXPECT_EQ(toml_error("gateways = 1\n"),
            "broker.toml: keys 'gateways' and 'access_points': both 0 (single-threaded) or both "
            "at least 1, got gateways = 1, access_points = 0");
  EXPECT_TRUE(parse_toml("access_points = 1\ngateways = 1\n", "broker.toml").ok());
}

TEST(ThreadKeys, CpusSyntaxErrorNamesKeyAndBadPart) {
  BrokerConfig config;
  EXPECT_TRUE(set_string(config, "cpus", "0,2,4-6").ok());
  EXPECT_EQ(config.cpus, "0,2,4-6");
  auto status = set_string(config, "cpus", "2-7,x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "'x': expected a cpu number or a range like 2-7");
  EXPECT_EQ(config.cpus, "0,2,4-6") << "a refused value leaves the old one";
  EXPECT_TRUE(set_string(config, "cpus", "").ok()) << "empty is no pinning";

  EXPECT_EQ(toml_error("cpus = \"7-2\"\n"), "broker.toml:1: key 'cpus': '7-2': range runs backwards");
  EXPECT_EQ(toml_error("\ncpus = \"1,1\"\n"), "broker.toml:2: key 'cpus': cpu 1 listed twice");

  BrokerConfig patched;
  patched.cpus = "1-";
  EXPECT_EQ(validate_error(patched),
            "key 'cpus': '1-': expected a cpu number or a range like 2-7");
}

TEST(ThreadKeys, CpusListsAtLeastOneCpuPerThread) {
  BrokerConfig config;
  config.gateways = 2;
  config.access_points = 2;
  config.cpus = "4-6";
  EXPECT_EQ(validate_error(config),
            "key 'cpus': '4-6' lists 3 cpus for 4 threads (2 gateways + 2 access points)");
  config.cpus = "4-7";
  EXPECT_TRUE(validate(config).ok());
  config.cpus = "0-15";  // more cpus than threads: the rest are unused
  EXPECT_TRUE(validate(config).ok());

  BrokerConfig single;
  single.cpus = "3";  // the one loop takes the first cpu
  EXPECT_TRUE(validate(single).ok());

  EXPECT_EQ(toml_error("gateways = 1\naccess_points = 1\ncpus = \"2\"\n"),
            "broker.toml: key 'cpus': '2' lists 1 cpu for 2 threads (1 gateway + 1 access point)");
}

}  // namespace
}  // namespace tw::config
