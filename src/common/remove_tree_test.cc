// RemoveTree: removes nested files and directories, is fine with a missing path, and removes
// symbolic links without following them (what they point to survives).
#include "common/remove_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tiresias {
namespace {

namespace fs = std::filesystem;

TEST(RemoveTree, RemovesATreeButNothingItsLinksPointTo) {
  const fs::path base = fs::temp_directory_path() / ("tiresias_rmtree_" + std::to_string(getpid()));
  fs::remove_all(base);
  const fs::path tree = base / "tree", outside = base / "outside";
  fs::create_directories(tree / "a" / "b" / "c");
  fs::create_directories(outside / "keep");
  std::ofstream(tree / "top.bin") << "x";
  std::ofstream(tree / "a" / "b" / "c" / "deep.txt") << "y";
  std::ofstream(outside / "keep" / "precious.txt") << "z";
  std::ofstream(outside / "file.txt") << "w";
  fs::create_directory_symlink(outside / "keep", tree / "a" / "link-to-dir");
  fs::create_symlink(outside / "file.txt", tree / "link-to-file");
  fs::create_symlink(base / "nowhere", tree / "dangling");

  ASSERT_TRUE(RemoveTree(tree.string()).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
  EXPECT_TRUE(fs::exists(outside / "keep" / "precious.txt"));
  EXPECT_TRUE(fs::exists(outside / "file.txt"));
  EXPECT_TRUE(RemoveTree(tree.string()).ok()) << "a missing path is fine";

  // A path that is itself a link: the link goes, its target stays.
  fs::create_directory_symlink(outside, base / "link");
  ASSERT_TRUE(RemoveTree((base / "link").string()).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(base / "link")));
  EXPECT_TRUE(fs::exists(outside / "keep" / "precious.txt"));
  fs::remove_all(base);
}

}  // namespace
}  // namespace tiresias
