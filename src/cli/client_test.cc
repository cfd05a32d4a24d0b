// The client's query strings: values are URL-encoded, so a user or VC name with '&', '='
// or spaces filters what it names instead of breaking the query.
#include "cli/client.h"

#include <gtest/gtest.h>

namespace tiresias {
namespace {

TEST(UrlQuery, EncodesValuesAndSkipsEmptyOnes) {
  EXPECT_EQ(UrlQuery({}), "");
  EXPECT_EQ(UrlQuery({{"vc", ""}}), "");
  EXPECT_EQ(UrlQuery({{"user", "a b&c=d"}, {"vc", ""}, {"state", "running,pending"}}),
            "?user=a%20b%26c%3Dd&state=running%2Cpending");
}

}  // namespace
}  // namespace tiresias
