// The dashboard's files (the folder dashboard/ of the repository), compiled into the binary by
// cmake/CqEmbedAssets.cmake, which writes the definition of DashboardAssets() into the build
// tree: the server needs no file and no network to serve the dashboard.
#pragma once

#include <span>
#include <string_view>

namespace chronoq::http {

struct DashboardAsset {
  std::string_view path;          // under dashboard/, e.g. "index.html", "js/api.js"
  std::string_view content_type;  // from the extension
  std::string_view etag;          // a quoted strong validator: part of the SHA-256 of the body
  std::string_view body;
};

// Every asset, sorted by path. The views are static.
std::span<const DashboardAsset> DashboardAssets();

}  // namespace chronoq::http
