// The API's handling of odd requests on a real serve (tests/api_security_fixture.h): an
// encoded NUL in the URL, unknown or malformed query parameters, ids that are no job's.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "api_security_fixture.h"

namespace tiresias {
namespace {

// Found by a tester: libmicrohttpd decodes the path and the query into C strings, so that an
// encoded NUL ended them: GET /v1/jobs/29%00 answered job 29 (and DELETE cancelled it), and
// state=running%00x listed the running jobs. Any %00 in the URL is now a 400.
TEST_F(ApiSecurityTest, AnEncodedNulInTheUrlIsRefused) {
  Serve({"--gpus", "1"});
  const ApiClient root = serve_->Client();
  auto sub = root.PostJson("/v1/jobs", {{"argv", {"sleep", "30"}}});
  ASSERT_TRUE(sub.ok()) << sub.status().message();
  const int64_t id = (*sub)["id"];
  for (const std::string& path :
       {fmt::format("/v1/jobs/{}%00", id), fmt::format("/v1/jobs/{}%00x/explain", id),
        std::string("/v1/jobs?state=running%00x"), std::string("/v1/jobs?%00state=running")}) {
    auto got = root.Get(path);
    EXPECT_EQ(got->status, 400) << path << ": " << got->body;
    EXPECT_NE(got->body.find("encoded NUL"), std::string::npos) << got->body;
  }
  EXPECT_EQ(root.Delete(fmt::format("/v1/jobs/{}%00", id))->status, 400);
  // An encoded percent sign is no NUL: the id "1%00" is no job's.
  EXPECT_EQ(root.Get(fmt::format("/v1/jobs/{}%2500", id))->status / 100, 4);
  // A % without two hex digits is no escape (found by a tester: ?user=%ZZ named "%ZZ").
  for (const char* path : {"/v1/jobs?user=%ZZ", "/v1/jobs?user=a%2", "/v1/jobs/1%"}) {
    auto got = root.Get(path);
    EXPECT_EQ(got->status, 400) << path << ": " << got->body;
    EXPECT_NE(got->body.find("malformed escape"), std::string::npos) << got->body;
  }
  EXPECT_EQ(root.Get("/v1/jobs?user=a%2Fb")->status, 200);  // (a valid one is decoded)
  // The same connection's next request is read afresh (two requests on one keep-alive
  // connection; the client above opens one per call).
  const int fd = OpenRaw();
  const std::string two =
      "GET /v1/health%00 HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(write(fd, two.data(), two.size()), static_cast<ssize_t>(two.size()));
  std::string replies;
  for (char buf[4096];;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    replies.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  EXPECT_EQ(replies.rfind("HTTP/1.1 400", 0), 0u) << replies;
  EXPECT_NE(replies.find("HTTP/1.1 200", 1), std::string::npos) << replies;
  // The job is untouched.
  auto job = root.GetJson(fmt::format("/v1/jobs/{}", id));
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_NE((*job)["state"], "cancelled") << job->dump();
}

// Found by a tester: a misspelled filter (?stat=running, ?bogus=1) listed every job, and
// ?active=2 read as false, where an unknown field of a body is refused. Each route takes its
// own parameters; flags take 1/0 or true/false.
TEST_F(ApiSecurityTest, UnknownOrMalformedQueryParametersAreRefused) {
  Serve({"--gpus", "1"});
  const ApiClient root = serve_->Client();
  for (const char* path : {"/v1/jobs?stat=running", "/v1/nodes?x=1", "/v1/history?active=1",
                           "/v1/jobs/1/logs?tail=3", "/v1/events?offset=1"}) {
    auto r = root.Get(path);
    EXPECT_EQ(r->status, 400) << path << ": " << r->body;
    EXPECT_NE(r->body.find("takes no query parameter"), std::string::npos) << r->body;
  }
  auto r = root.Get("/v1/jobs?stat=running");
  EXPECT_NE(r->body.find("(known: state, active,"), std::string::npos) << r->body;
  for (const char* path :
       {"/v1/jobs?active=2", "/v1/jobs?newest=yes", "/v1/jobs?me=yes", "/v1/jobs?estimates=on"}) {
    auto bad = root.Get(path);
    EXPECT_EQ(bad->status, 400) << path << ": " << bad->body;
    EXPECT_NE(bad->body.find("expected 1 or 0"), std::string::npos) << bad->body;
  }
  for (const char* path :
       {"/v1/jobs?active=0&limit=5&newest=true", "/v1/jobs?me=1&estimates=1",
        "/v1/history?since_ms=0", "/v1/events?latest=3", "/v1/stats?after_ms=0", "/v1/nodes"}) {
    EXPECT_EQ(root.Get(path)->status, 200) << path;
  }
  EXPECT_EQ(root.Get("/v1/events?latest=2&limit=5")->status, 400);  // (limit won, silently)
  // A negative array index is no job's name (it was a 404, "no such array task"), and 0 no
  // job's id (events?job=0 listed every job's events).
  EXPECT_EQ(root.Get("/v1/jobs/1_-1")->status, 400);
  EXPECT_EQ(root.Get("/v1/events?job=0")->status, 400);
  // A VC serve does not have, matching no job, is said, not an empty list (`ls --vc visoin`);
  // history too.
  auto vc = root.Get("/v1/jobs?vc=vision");
  EXPECT_EQ(vc->status, 400) << vc->body;
  EXPECT_NE(
      vc->body.find(R"(serve has no VCs (no --tenants), and no job listed is in VC \"vision\")"),
      std::string::npos)
      << vc->body;
  EXPECT_EQ(root.Get("/v1/history?vc=vision")->status, 400);  // none there either
}

}  // namespace
}  // namespace tiresias
