// The fixture of serve's end-to-end tests (tests/serve*_test.cc): a fresh state directory per
// test, `tiresias serve` started with the test's flags, and no job process left behind. In a
// named namespace: the suite spans files.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "serve_process.h"
#include "test_util.h"

namespace tiresias::serve_test {

namespace fs = std::filesystem;
using testing::ServeProcess;

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshDir(
        fmt::format("serve_{}", ::testing::UnitTest::GetInstance()->current_test_info()->name()));
  }
  void TearDown() override {
    // Leave no job processes behind, whatever happened.
    serve_.reset();
    for (int pid : pids_) kill(-pid, SIGKILL);
    // Kept for a look when something failed; none when the test was skipped in SetUp.
    if (!HasFailure() && !dir_.empty()) testing::RemoveServeDir(dir_);
  }
  void Serve(std::vector<std::string> args) {
    serve_ = std::make_unique<ServeProcess>(dir_, std::move(args));
    serve_->Start();
  }
  int64_t Submit(const nlohmann::json& body) {
    auto id = serve_->SubmitJob(body);
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? *id : -1;
  }
  nlohmann::json Job(int64_t id) {
    nlohmann::json j = serve_->GetJob(id);
    if (j.is_object() && j["pid"].get<int>() > 0) pids_.insert(j["pid"].get<int>());
    return j;
  }
  std::string State(int64_t id) {
    auto j = Job(id);
    return j.is_null() ? "?" : j["state"].get<std::string>();
  }
  nlohmann::json Events() { return *serve_->Client().GetJson("/v1/events?limit=100000"); }

  fs::path dir_;
  std::unique_ptr<ServeProcess> serve_;
  std::set<int> pids_;
};

inline bool Ended(const std::string& s) {
  return s == "finished" || s == "failed" || s == "cancelled";
}

}  // namespace tiresias::serve_test
