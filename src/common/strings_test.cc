// EscapeControl (src/common/strings.h): what `tiresias ls/show/events` print for job names and
// messages. Control characters and invalid UTF-8 become visible escapes; everything else,
// including non-ASCII text, is kept byte for byte.
#include "common/strings.h"

#include <gtest/gtest.h>

namespace tiresias {
namespace {

using namespace std::string_literals;

TEST(EscapeControl, PlainAndUnicodeTextIsKept) {
  EXPECT_EQ(EscapeControl("bert-ft lr=3e-4"), "bert-ft lr=3e-4");
  EXPECT_EQ(EscapeControl("résumé 训练 🚀"), "résumé 训练 🚀");
  EXPECT_EQ(EscapeControl("a\\b"), "a\\b");  // backslashes are not control characters
  EXPECT_EQ(EscapeControl(""), "");
}

TEST(EscapeControl, ControlCharactersBecomeEscapes) {
  EXPECT_EQ(EscapeControl("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(EscapeControl("\x1b[2J\x1b[31mred"), "\\x1b[2J\\x1b[31mred");
  EXPECT_EQ(EscapeControl("nul\0x"s), "nul\\x00x");
  EXPECT_EQ(EscapeControl("bell\x07 del\x7f"), "bell\\x07 del\\x7f");
  // C1 controls in UTF-8 (U+009B is the 8-bit CSI some terminals obey).
  EXPECT_EQ(EscapeControl("\xc2\x9b"
                          "31m"),
            "\\u009b31m");
  EXPECT_EQ(EscapeControl("\xc2\x85"), "\\u0085");
  EXPECT_EQ(EscapeControl("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is printable
  // Bidirectional controls: U+202E (right-to-left override) made "job\u202Egnp.exe" show as
  // "jobexe.png"; U+2066 and U+200F are of the same kind. U+2014 (an em dash) is printable.
  EXPECT_EQ(EscapeControl("job\xe2\x80\xae"
                          "gnp"),
            "job\\u202egnp");
  EXPECT_EQ(EscapeControl("\xe2\x81\xa6x\xe2\x80\x8f"), "\\u2066x\\u200f");
  EXPECT_EQ(EscapeControl("\xd8\x9c"
                          "a"),
            "\\u061ca");  // ARABIC LETTER MARK
  EXPECT_EQ(EscapeControl("a\xe2\x80\x94"
                          "b"),
            "a\xe2\x80\x94"
            "b");
}

TEST(EscapeControl, InvalidUtf8BecomesBytes) {
  EXPECT_EQ(EscapeControl("\x9b"
                          "31m"),
            "\\x9b31m");  // a raw 8-bit CSI
  EXPECT_EQ(EscapeControl("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(EscapeControl("caf\xc3"), "caf\\xc3");                       // cut sequence
  EXPECT_EQ(EscapeControl("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(EscapeControl("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // UTF-16 surrogate
  EXPECT_EQ(EscapeControl("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // beyond U+10FFFF
}

TEST(Strings, EnvSetReplacesOnlyItsOwnKey) {
  // PATHX and a value holding "PATH=" are other variables; the last PATH wins, once.
  std::vector<std::string> env = {"PATH=/a", "PATHX=/x", "A=PATH=/b", "PATH=/c"};
  EnvSet(env, "PATH", "/d");
  EXPECT_EQ(env, (std::vector<std::string>{"PATHX=/x", "A=PATH=/b", "PATH=/d"}));
  EnvUnset(env, "A");
  EnvUnset(env, "NONE");
  EXPECT_EQ(env, (std::vector<std::string>{"PATHX=/x", "PATH=/d"}));
  EnvSet(env, "EMPTY", "");
  EXPECT_EQ(env.back(), "EMPTY=");
}

}  // namespace
}  // namespace tiresias
