// HPACK for the engine that frames HTTP/2 itself (h2_frames.h), through nghttp2's standalone
// coder: the same decoder and encoder nghttp2's sessions use, without the session.
#include "grpc_api/h2_frames.h"

#include <nghttp2/nghttp2.h>

#include <algorithm>

#include "base/block_cache.h"

namespace chronoq::grpc_api::h2 {
namespace {

// A thread's freed blocks serve the next calls (base/block_cache.h), as for nghttp2's sessions.
nghttp2_mem* Mem() {
  static nghttp2_mem mem{nullptr, base::block_cache::Malloc, base::block_cache::Free,
                         base::block_cache::Calloc, base::block_cache::Realloc};
  return &mem;
}

std::string_view View(const uint8_t* p, size_t n) { return {reinterpret_cast<const char*>(p), n}; }

}  // namespace

struct HpackDecoder::Impl {
  nghttp2_hd_inflater* inflater = nullptr;
};

HpackDecoder::HpackDecoder() : impl_(std::make_unique<Impl>()) {
  nghttp2_hd_inflate_new2(&impl_->inflater, Mem());
}

HpackDecoder::~HpackDecoder() { nghttp2_hd_inflate_del(impl_->inflater); }

bool HpackDecoder::DecodeWith(const uint8_t* block, size_t n, void* fn,
                              void (*call)(void*, std::string_view, std::string_view)) {
  const std::string_view bytes = View(block, n);
  if (n > 0 && bytes == indexed_block_) {
    for (const auto& [name, value] : indexed_fields_) call(fn, name, value);
    return true;
  }
  // One-byte indexed fields only (0x81-0xfe: indexes 1-126): the table stays as it is.
  const bool indexed =
      n > 0 && std::all_of(block, block + n, [](uint8_t b) { return b > 0x80 && b < 0xff; });
  indexed_block_.clear();
  indexed_fields_.clear();
  for (;;) {
    nghttp2_nv nv;
    int flags = 0;
    const ssize_t used = nghttp2_hd_inflate_hd2(impl_->inflater, &nv, &flags, block, n, 1);
    if (used < 0) return false;
    block += used;
    n -= static_cast<size_t>(used);
    if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0) {
      const std::string_view name = View(nv.name, nv.namelen);
      const std::string_view value = View(nv.value, nv.valuelen);
      if (indexed) indexed_fields_.emplace_back(name, value);
      call(fn, name, value);
    }
    if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) {
      nghttp2_hd_inflate_end_headers(impl_->inflater);
      if (indexed) indexed_block_.assign(bytes);
      return true;
    }
    if ((flags & NGHTTP2_HD_INFLATE_EMIT) == 0 && n == 0) return true;
  }
}

struct HpackEncoder::Impl {
  nghttp2_hd_deflater* deflater = nullptr;
};

HpackEncoder::HpackEncoder() : impl_(std::make_unique<Impl>()) {
  nghttp2_hd_deflate_new2(&impl_->deflater, 4096, Mem());
}

HpackEncoder::~HpackEncoder() { nghttp2_hd_deflate_del(impl_->deflater); }

bool HpackEncoder::Encode(const Field* fields, size_t n, std::string* out) {
  nghttp2_nv nva[8];
  if (n > std::size(nva)) return false;
  for (size_t i = 0; i < n; ++i) {
    nva[i] = nghttp2_nv{
        reinterpret_cast<uint8_t*>(const_cast<char*>(fields[i].name.data())),
        reinterpret_cast<uint8_t*>(const_cast<char*>(fields[i].value.data())),
        fields[i].name.size(), fields[i].value.size(),
        static_cast<uint8_t>(fields[i].index ? NGHTTP2_NV_FLAG_NONE : NGHTTP2_NV_FLAG_NO_INDEX)};
  }
  const size_t at = out->size();
  out->resize(at + nghttp2_hd_deflate_bound(impl_->deflater, nva, n));
  const ssize_t w = nghttp2_hd_deflate_hd(
      impl_->deflater, reinterpret_cast<uint8_t*>(out->data() + at), out->size() - at, nva, n);
  if (w < 0) {
    out->resize(at);
    return false;
  }
  out->resize(at + static_cast<size_t>(w));
  return true;
}

bool HpackEncoder::SetTableSize(uint32_t bytes) {
  return nghttp2_hd_deflate_change_table_size(impl_->deflater, bytes) == 0;
}

size_t HpackEncoder::Entries() const {
  return nghttp2_hd_deflate_get_num_table_entries(impl_->deflater);
}

}  // namespace chronoq::grpc_api::h2
