// `tiresias serve`'s identities: the kernel names local users; API tokens (made, listed and
// revoked by the CLI, never for a uid-0 user) name remote ones, with the Bearer scheme in any
// case; a dashboard session ends with its token and cannot start another.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/identity.h"
#include "api_security_fixture.h"
#include "cli/client.h"
#include "test_util.h"

namespace tiresias {
namespace {

using namespace std::chrono_literals;
using testing::AsNobody;
using testing::WaitFor;

TEST_F(ApiSecurityTest, TheKernelNamesLocalUsers) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to call as another local user";
  Serve({"--gpus", "1"});
  // A child process as `nobody` (65534) calls through the socket: the server names it so,
  // whatever it claims, and it is no admin.
  const std::string got = AsNobody([&] {
    auto c = ApiClient::Connect({.state_dir = dir_.string()});
    if (!c.ok()) return std::string("connect failed");
    auto me = c->GetJson("/v1/whoami");
    auto forged = c->Post("/v1/jobs", R"({"argv": ["true"], "user": "root"})");
    return me.ok() ? fmt::format("{} {} {}", (*me)["uid"].dump(), (*me)["admin"].dump(),
                                 forged.ok() ? forged->status : -1)
                   : me.status().message();
  });
  EXPECT_EQ(got, "65534 false 403");
}

TEST(ApiIdentity, TheBearerSchemeIsReadInAnyCaseAndAnotherSchemeIsNamed) {
  // Regression (an exploratory test): `Authorization: bearer TOKEN` (RFC 9110: the scheme is
  // case-insensitive) was refused as "the token is not valid (revoked...)", and so was `Basic
  // ...`, which says nothing of what was wrong.
  const auto dir = std::filesystem::temp_directory_path() / "tiresias_test_bearer";
  std::filesystem::create_directories(dir);
  auto ids = Identities::Open("0123456789abcdef0123456789abcdef", (dir / "tokens.json").string(),
                              getuid());
  ASSERT_TRUE(ids.ok()) << ids.status().message();
  auto with = [&](const std::string& header) {
    HttpRequest req{.method = "GET", .path = "/v1/whoami"};
    req.headers["authorization"] = header;
    return (*ids)->Resolve(req);
  };
  for (const std::string scheme : {"Bearer", "bearer", "BEARER"}) {
    auto c = with(scheme + " 0123456789abcdef0123456789abcdef");
    ASSERT_TRUE(c.ok()) << scheme << ": " << c.status().message();
    EXPECT_EQ(c->via, "admin token");
  }
  auto basic = with("Basic YWxhZGRpbjpvcGVuc2VzYW1l");
  EXPECT_EQ(basic.status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(basic.status().message(),
            "Authorization: expected the scheme Bearer ('Authorization: Bearer <token>'), got "
            "\"Basic\"");
  EXPECT_EQ(with("Bearer ").status().message(), "Authorization: Bearer without a token");
  EXPECT_EQ(with("Bearer nope").status().code(), StatusCode::kUnauthenticated);
  // A header without a scheme is not echoed: it would be the secret itself.
  EXPECT_EQ(with("0123456789abcdef0123456789abcdef").status().message().find("0123456789"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_F(ApiSecurityTest, CliManagesTokensAndSaysWhoYouAre) {
  Serve({"--gpus", "1"});
  const std::string sd = "--state-dir " + dir_.string();
  auto tok = testing::RunTiresias("token create carol " + sd);
  ASSERT_EQ(tok.rc, 0) << tok.out;
  const std::string token = testing::Trimmed(tok.out);
  EXPECT_EQ(token.size(), 32u) << tok.out;
  auto me = testing::RunTiresias(
      fmt::format("whoami --server {} --token {} --state-dir /nonexistent", Url(), token));
  EXPECT_EQ(me.rc, 0) << me.out;
  EXPECT_EQ(me.out, "carol (via token)\n");
  // --me is whom the server knows (an exploratory test: it sent this machine's login name, so
  // carol listed the local user's jobs).
  ASSERT_EQ(testing::RunTiresias("submit -H " + sd + " -- true").rc, 0);
  auto mine = testing::RunTiresias(
      fmt::format("ls --me -o json --server {} --token {} --state-dir /nonexistent", Url(), token));
  EXPECT_EQ(mine.rc, 0) << mine.out;
  EXPECT_EQ(testing::Trimmed(mine.out), "[]");
  mine = testing::RunTiresias("ls --me -o json " + sd);
  EXPECT_EQ(nlohmann::json::parse(mine.out, nullptr, false).size(), 1u) << mine.out;
  mine = testing::RunTiresias(fmt::format(
      "history --me -o json --server {} --token {} --state-dir /nonexistent", Url(), token));
  EXPECT_EQ(testing::Trimmed(mine.out), "[]");
  mine =
      testing::RunTiresias(fmt::format("ls --me --user root -o json --server {} --token {} "
                                       "--state-dir /nonexistent",
                                       Url(), token));
  EXPECT_NE(mine.out.find(R"(query me: you are "carol", and user names "root")"), std::string::npos)
      << mine.out;
  EXPECT_EQ(testing::RunTiresias("token ls " + sd).out, "carol\n");
  // -o json, as every command (it was refused: "did you mean --token?").
  const auto made = nlohmann::json::parse(
      testing::RunTiresias("token create dave -o json " + sd).out, nullptr, false);
  EXPECT_EQ(made.value("user", ""), "dave") << made.dump();
  EXPECT_EQ(made.value("token", "").size(), 32u) << made.dump();
  const auto gone = nlohmann::json::parse(
      testing::RunTiresias("token revoke dave -o json " + sd).out, nullptr, false);
  EXPECT_EQ(gone.value("revoked", false), true) << gone.dump();
  EXPECT_EQ(testing::RunTiresias("token revoke carol " + sd).rc, 0);
  me = testing::RunTiresias(
      fmt::format("whoami --server {} --token {} --state-dir /nonexistent", Url(), token));
  EXPECT_NE(me.rc, 0);
  EXPECT_NE(me.out.find("token is not valid"), std::string::npos) << me.out;
  auto bad = testing::RunTiresias("token create 'Robert; drop' " + sd);
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.out.find("is not a user name"), std::string::npos) << bad.out;
  // None for the superuser (an exploratory test): its holder's jobs would run as uid 0.
  bad = testing::RunTiresias("token create root " + sd);
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.out.find("root is uid 0: a token for it would run its holder's jobs as the "
                         "superuser"),
            std::string::npos)
      << bad.out;
  EXPECT_EQ(testing::RunTiresias("token ls " + sd).out, "");
}

// Found by a review: a session started with a token outlived the token's revocation and could
// start sessions of its own, so access never lapsed. Now a token's sessions end with it (when
// revoked or replaced), a session cannot start another, and a user's sessions are capped.
TEST_F(ApiSecurityTest, SessionsEndWithTheirTokenAndCannotStartMore) {
  Serve({"--gpus", "1"});
  const ApiClient root = serve_->Client();
  auto session_of = [&](const ApiClient& c) {
    auto s = c.PostJson("/v1/sessions", nlohmann::json::object());
    return s.ok() ? (*s)["token"].get<std::string>() : s.status().message();
  };
  auto whoami = [&](const std::string& token) { return Tcp(token).Get("/v1/whoami")->status; };
  for (const char* end : {"revoke", "replace"}) {
    const std::string token = (*root.PostJson("/v1/tokens", {{"user", "alice"}}))["token"];
    const std::string session = session_of(Tcp(token));
    ASSERT_EQ(whoami(session), 200) << end << ": " << session;
    EXPECT_EQ(Tcp(session).Post("/v1/sessions", "{}")->status, 403) << end;
    const std::string local = session_of(root);  // the socket's: not the token's to end
    if (std::string(end) == "revoke") {
      EXPECT_EQ(root.Delete("/v1/tokens/alice")->status, 200);
    } else {
      ASSERT_TRUE(root.PostJson("/v1/tokens", {{"user", "alice"}}).ok());
    }
    EXPECT_EQ(whoami(token), 401) << end;
    EXPECT_EQ(whoami(session), 401) << end;
    EXPECT_EQ(whoami(local), 200) << end;
    (void)root.Delete("/v1/tokens/alice");
  }
  // Found by a tester: an admin's session created tokens (for any user, never expiring) and
  // revoked them. Only the socket or the admin token manage tokens.
  const ApiClient admin_session = Tcp(session_of(root));
  ASSERT_EQ(admin_session.Get("/v1/whoami")->status, 200);
  auto minted = admin_session.Post("/v1/tokens", R"({"user":"daemon"})");
  EXPECT_EQ(minted->status, 403) << minted->body;
  EXPECT_NE(minted->body.find("session cannot manage tokens"), std::string::npos) << minted->body;
  ASSERT_TRUE(root.PostJson("/v1/tokens", {{"user", "bob"}}).ok());
  EXPECT_EQ(admin_session.Delete("/v1/tokens/bob")->status, 403);
  EXPECT_EQ(admin_session.Get("/v1/tokens")->status, 403);
  EXPECT_EQ((*root.GetJson("/v1/tokens"))["users"], nlohmann::json({"bob"}));
  // Nor run code as another user (found by a review): submitting for someone is refused.
  auto as_other = admin_session.Post("/v1/jobs", R"({"argv":["true"],"user":"daemon"})");
  EXPECT_EQ(as_other->status, 403) << as_other->body;
  EXPECT_NE(as_other->body.find("a dashboard session cannot submit as"), std::string::npos)
      << as_other->body;
  // At most kMaxSessionsPerUser each: the first of one more than that has ended.
  std::vector<std::string> many;
  for (size_t i = 0; i <= Identities::kMaxSessionsPerUser; ++i) many.push_back(session_of(root));
  EXPECT_EQ(whoami(many.front()), 401);
  EXPECT_EQ(whoami(many.back()), 200);
  EXPECT_EQ(whoami(many[1]), 200);
}

}  // namespace
}  // namespace tiresias
