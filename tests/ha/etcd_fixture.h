// One real etcd per test (tests/testlib/etcd_server.h).
#pragma once
#include <gtest/gtest.h>

#include <memory>

#include "testlib/broker_process.h"
#include "testlib/etcd_server.h"

namespace tw::ha {

class WithEtcd : public ::testing::Test {
 protected:
  void SetUp() override {
    // scripts/deps.sh installs etcd-server: its absence is a broken set-up, not a skip.
    ASSERT_TRUE(tw::testing::EtcdServer::installed()) << "etcd-server is not installed (scripts/deps.sh)";
    etcd_ = std::make_unique<tw::testing::EtcdServer>();
    ASSERT_TRUE(etcd_->ok()) << "etcd did not start: " << etcd_->log();
  }
  std::unique_ptr<tw::testing::EtcdServer> etcd_;
};

}  // namespace tw::ha
