// The dashboard's files (web/), bundled at build time by scripts/build_web.sh and compiled
// into the binary by cmake/embed_assets.cmake, so serve needs no files and no network to
// show it. Empty when the build had no node/npm.
#pragma once

#include <string_view>
#include <vector>

namespace tiresias {

struct WebAsset {
  std::string_view path;  // "/index.html", "/app.js", ...
  std::string_view content_type;
  std::string_view body;
};

const std::vector<WebAsset>& DashboardAssets();

}  // namespace tiresias
