// BTreeIndex<V>: an ordered map from IndexKey (time, seq) to V, as a B+tree with wide nodes.
// The engine's per-topic indexes (visibility, expiry, retention) are queues ordered by time: a
// red-black tree costs a cache miss per level (about 20 at a million entries) on every insert and
// one per step when walking entries that fall due. Here a lookup touches about four nodes, and a
// walk reads leaves of kLeafCap contiguous entries, linked in key order.
//
// Operation. Keys are unique. Erase never leaves an empty leaf (except an empty root), and a
// node that drops below a quarter full is merged with a neighbour when both fit in one, so memory
// stays proportional to the number of entries. Iterators stay valid until the next Insert or
// Erase.
//
// Thread-safety: none; the owner's lock guards it.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "base/check.h"
#include "base/time.h"

namespace chronoq::engine {

struct IndexKey {
  TimePoint t;
  uint64_t seq;
  auto operator<=>(const IndexKey&) const = default;
};

template <typename V, int kLeafCap = 32, int kInnerCap = 32>
class BTreeIndex {
  struct Inner;
  struct Node {
    bool leaf;
    int count = 0;  // leaf: entries; inner: separator keys (children = count + 1)
    Inner* parent = nullptr;
    explicit Node(bool is_leaf) : leaf(is_leaf) {}
  };
  // One spare slot each, so that an insert can land before the node splits.
  struct Leaf : Node {
    Leaf() : Node(true) {}
    IndexKey keys[kLeafCap + 1];
    V vals[kLeafCap + 1];
    Leaf* prev = nullptr;
    Leaf* next = nullptr;
  };
  struct Inner : Node {
    Inner() : Node(false) {}
    // Child i holds the keys k with keys[i-1] <= k < keys[i].
    IndexKey keys[kInnerCap + 1];
    Node* kids[kInnerCap + 2];
  };

 public:
  class Iterator {
   public:
    Iterator() = default;
    const IndexKey& key() const { return leaf_->keys[i_]; }
    V& value() const { return leaf_->vals[i_]; }
    Iterator& operator++() {
      if (++i_ == leaf_->count) {
        leaf_ = leaf_->next;
        i_ = 0;
      }
      return *this;
    }
    bool operator==(const Iterator& o) const { return leaf_ == o.leaf_ && i_ == o.i_; }

   private:
    friend class BTreeIndex;
    Iterator(Leaf* leaf, int i) : leaf_(leaf), i_(i) {
      if (leaf_ != nullptr && i_ == leaf_->count) {
        leaf_ = leaf_->next;
        i_ = 0;
      }
    }
    Leaf* leaf_ = nullptr;
    int i_ = 0;
  };

  BTreeIndex() : root_(new Leaf()) {}
  ~BTreeIndex() { Free(root_); }
  BTreeIndex(const BTreeIndex&) = delete;
  BTreeIndex& operator=(const BTreeIndex&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  Iterator begin() const { return Iterator(LeftmostLeaf(), 0); }
  Iterator end() const { return Iterator(); }
  // First entry with key >= k.
  Iterator LowerBound(const IndexKey& k) const {
    Leaf* leaf = FindLeaf(k);
    return Iterator(
        leaf,
        static_cast<int>(std::lower_bound(leaf->keys, leaf->keys + leaf->count, k) - leaf->keys));
  }
  // First entry with key > k.
  Iterator UpperBound(const IndexKey& k) const {
    Leaf* leaf = FindLeaf(k);
    return Iterator(
        leaf,
        static_cast<int>(std::upper_bound(leaf->keys, leaf->keys + leaf->count, k) - leaf->keys));
  }
  V* Find(const IndexKey& k) const {
    Iterator it = LowerBound(k);
    return it != end() && it.key() == k ? &it.value() : nullptr;
  }

  // Adds k -> v; false (and nothing changes) when k is present.
  bool Insert(const IndexKey& k, V v) {
    Leaf* leaf = FindLeaf(k);
    int pos =
        static_cast<int>(std::lower_bound(leaf->keys, leaf->keys + leaf->count, k) - leaf->keys);
    if (pos < leaf->count && leaf->keys[pos] == k) return false;
    std::move_backward(leaf->keys + pos, leaf->keys + leaf->count, leaf->keys + leaf->count + 1);
    std::move_backward(leaf->vals + pos, leaf->vals + leaf->count, leaf->vals + leaf->count + 1);
    leaf->keys[pos] = k;
    leaf->vals[pos] = std::move(v);
    ++leaf->count;
    ++size_;
    // An ascending run: the entry lands right after the previous insert (or at the leaf's end).
    const bool run = pos == leaf->count - 1 || (pos > 0 && leaf->keys[pos - 1] == last_insert_);
    last_insert_ = k;
    if (leaf->count > kLeafCap) SplitLeaf(leaf, run ? pos : -1);
    return true;
  }

  // Removes k; false when absent.
  bool Erase(const IndexKey& k) {
    Leaf* leaf = FindLeaf(k);
    int pos =
        static_cast<int>(std::lower_bound(leaf->keys, leaf->keys + leaf->count, k) - leaf->keys);
    if (pos == leaf->count || !(leaf->keys[pos] == k)) return false;
    std::move(leaf->keys + pos + 1, leaf->keys + leaf->count, leaf->keys + pos);
    std::move(leaf->vals + pos + 1, leaf->vals + leaf->count, leaf->vals + pos);
    --leaf->count;
    leaf->vals[leaf->count] = V();
    --size_;
    AfterErase(leaf);
    return true;
  }

  // Leaves in the chain (tests: how full the tree keeps them).
  size_t TEST_LeafCount() const {
    size_t n = 0;
    for (Leaf* l = LeftmostLeaf(); l != nullptr; l = l->next) ++n;
    return n;
  }

  // Checks the structural invariants (tests).
  void TEST_Check() const {
    size_t n = 0;
    Check(root_, nullptr, nullptr, &n);
    CQ_CHECK(n == size_, "size {} but {} entries", size_, n);
    const IndexKey* last = nullptr;
    size_t walked = 0;
    for (Leaf* l = LeftmostLeaf(); l != nullptr; l = l->next) {
      CQ_CHECK(l == root_ || l->count > 0, "empty leaf in the chain");
      if (l->next != nullptr) CQ_CHECK(l->next->prev == l, "broken leaf links");
      for (int i = 0; i < l->count; ++i, ++walked) {
        if (last != nullptr) CQ_CHECK(*last < l->keys[i], "leaf chain out of order");
        last = &l->keys[i];
      }
    }
    CQ_CHECK(walked == size_, "leaf chain has {} entries, size {}", walked, size_);
  }

 private:
  static int ChildIndex(const Inner* p, const Node* child) {
    for (int i = 0; i <= p->count; ++i) {
      if (p->kids[i] == child) return i;
    }
    CQ_CHECK(false, "child not found in its parent");
    return -1;
  }

  Leaf* FindLeaf(const IndexKey& k) const {
    Node* n = root_;
    while (!n->leaf) {
      auto* in = static_cast<Inner*>(n);
      n = in->kids[std::upper_bound(in->keys, in->keys + in->count, k) - in->keys];
    }
    return static_cast<Leaf*>(n);
  }

  Leaf* LeftmostLeaf() const {
    Node* n = root_;
    while (!n->leaf) n = static_cast<Inner*>(n)->kids[0];
    auto* leaf = static_cast<Leaf*>(n);
    return leaf->count == 0 ? nullptr : leaf;
  }

  // Splits an overfull leaf in two halves or, when the entry that overfilled it (at `run_pos`,
  // -1: none) continues an ascending run of inserts (like the times of messages sent with one
  // delay), just after that entry (just before it when it is the last), so that ascending
  // inserts fill their leaves instead of leaving each one half empty.
  void SplitLeaf(Leaf* left, int run_pos) {
    auto* right = new Leaf();
    int keep = run_pos < 0 ? left->count / 2 : std::min(run_pos + 1, left->count - 1);
    right->count = left->count - keep;
    std::move(left->keys + keep, left->keys + left->count, right->keys);
    std::move(left->vals + keep, left->vals + left->count, right->vals);
    for (int i = keep; i < left->count; ++i) left->vals[i] = V();
    left->count = keep;
    right->next = left->next;
    if (right->next != nullptr) right->next->prev = right;
    right->prev = left;
    left->next = right;
    InsertIntoParent(left, right->keys[0], right);
  }

  void InsertIntoParent(Node* left, const IndexKey& sep, Node* right) {
    Inner* p = left->parent;
    if (p == nullptr) {
      auto* root = new Inner();
      root->count = 1;
      root->keys[0] = sep;
      root->kids[0] = left;
      root->kids[1] = right;
      left->parent = right->parent = root;
      root_ = root;
      return;
    }
    int idx = ChildIndex(p, left);
    const bool appended = idx == p->count;  // right becomes p's last child
    std::move_backward(p->keys + idx, p->keys + p->count, p->keys + p->count + 1);
    std::move_backward(p->kids + idx + 1, p->kids + p->count + 1, p->kids + p->count + 2);
    p->keys[idx] = sep;
    p->kids[idx + 1] = right;
    right->parent = p;
    ++p->count;
    if (p->count > kInnerCap) SplitInner(p, appended);
  }

  // As SplitLeaf: when the new child is the last, the left node stays full and the right one
  // starts with that child alone.
  void SplitInner(Inner* left, bool appended) {
    auto* right = new Inner();
    int mid = appended ? left->count - 1 : left->count / 2;
    IndexKey up = left->keys[mid];
    right->count = left->count - mid - 1;
    std::copy(left->keys + mid + 1, left->keys + left->count, right->keys);
    std::copy(left->kids + mid + 1, left->kids + left->count + 1, right->kids);
    for (int i = 0; i <= right->count; ++i) right->kids[i]->parent = right;
    left->count = mid;
    InsertIntoParent(left, up, right);
  }

  // Removes child `idx` of p and the separator beside it. REQUIRES: p has another child.
  void RemoveChild(Inner* p, int idx) {
    int key_idx = idx > 0 ? idx - 1 : 0;
    std::move(p->keys + key_idx + 1, p->keys + p->count, p->keys + key_idx);
    std::move(p->kids + idx + 1, p->kids + p->count + 1, p->kids + idx);
    --p->count;
  }

  void UnlinkLeaf(Leaf* leaf) {
    if (leaf->prev != nullptr) leaf->prev->next = leaf->next;
    if (leaf->next != nullptr) leaf->next->prev = leaf->prev;
  }

  static void DeleteNode(Node* n) {
    if (n->leaf) {
      delete static_cast<Leaf*>(n);
    } else {
      delete static_cast<Inner*>(n);
    }
  }

  // Deletes `child`, which holds no entries any more (a leaf already unlinked, or an inner node
  // whose only child is gone), and removes it from its parent.
  void RemoveFromParent(Node* child) {
    Inner* p = child->parent;
    int idx = ChildIndex(p, child);
    DeleteNode(child);
    if (p->count == 0) {  // it was p's only child: p is empty too
      if (p == root_) {
        delete p;
        root_ = new Leaf();
        return;
      }
      RemoveFromParent(p);
      return;
    }
    RemoveChild(p, idx);
    AfterShrink(p);
  }

  void AfterErase(Leaf* leaf) {
    if (leaf == root_) return;
    if (leaf->count == 0) {
      UnlinkLeaf(leaf);
      RemoveFromParent(leaf);
      return;
    }
    if (leaf->count >= kLeafCap / 4) return;
    // Sparse: merge with a neighbour under the same parent when both fit in one leaf.
    Inner* p = leaf->parent;
    int idx = ChildIndex(p, leaf);
    Leaf* left = nullptr;
    Leaf* right = nullptr;
    int right_idx = 0;
    if (idx < p->count && leaf->count + static_cast<Leaf*>(p->kids[idx + 1])->count <= kLeafCap) {
      left = leaf;
      right = static_cast<Leaf*>(p->kids[idx + 1]);
      right_idx = idx + 1;
    } else if (idx > 0 && leaf->count + static_cast<Leaf*>(p->kids[idx - 1])->count <= kLeafCap) {
      left = static_cast<Leaf*>(p->kids[idx - 1]);
      right = leaf;
      right_idx = idx;
    } else {
      return;
    }
    std::move(right->keys, right->keys + right->count, left->keys + left->count);
    std::move(right->vals, right->vals + right->count, left->vals + left->count);
    left->count += right->count;
    UnlinkLeaf(right);
    RemoveChild(p, right_idx);
    delete right;
    AfterShrink(p);
  }

  // p lost a child: collapse the root, drop an empty node, or merge a sparse one.
  void AfterShrink(Inner* p) {
    if (p == root_) {
      while (!root_->leaf && root_->count == 0) {
        Node* only = static_cast<Inner*>(root_)->kids[0];
        delete static_cast<Inner*>(root_);
        root_ = only;
        root_->parent = nullptr;
      }
      return;
    }
    if (p->count >= kInnerCap / 4) return;
    Inner* g = p->parent;
    int idx = ChildIndex(g, p);
    Inner* left = nullptr;
    Inner* right = nullptr;
    int sep_idx = 0;
    if (idx < g->count &&
        p->count + static_cast<Inner*>(g->kids[idx + 1])->count + 1 <= kInnerCap) {
      left = p;
      right = static_cast<Inner*>(g->kids[idx + 1]);
      sep_idx = idx;
    } else if (idx > 0 &&
               p->count + static_cast<Inner*>(g->kids[idx - 1])->count + 1 <= kInnerCap) {
      left = static_cast<Inner*>(g->kids[idx - 1]);
      right = p;
      sep_idx = idx - 1;
    } else {
      return;
    }
    // The separator between them comes down between their children.
    left->keys[left->count] = g->keys[sep_idx];
    std::copy(right->keys, right->keys + right->count, left->keys + left->count + 1);
    std::copy(right->kids, right->kids + right->count + 1, left->kids + left->count + 1);
    for (int i = 0; i <= right->count; ++i) right->kids[i]->parent = left;
    left->count += right->count + 1;
    RemoveChild(g, sep_idx + 1);
    delete right;
    AfterShrink(g);
  }

  void Free(Node* n) {
    if (n->leaf) {
      delete static_cast<Leaf*>(n);
      return;
    }
    auto* in = static_cast<Inner*>(n);
    for (int i = 0; i <= in->count; ++i) Free(in->kids[i]);
    delete in;
  }

  // Keys of n lie in [lo, hi); counts entries into *n_entries.
  void Check(const Node* n, const IndexKey* lo, const IndexKey* hi, size_t* n_entries) const {
    auto in_range = [&](const IndexKey& k) { return (!lo || !(k < *lo)) && (!hi || k < *hi); };
    if (n->leaf) {
      auto* l = static_cast<const Leaf*>(n);
      for (int i = 0; i < l->count; ++i) {
        CQ_CHECK(in_range(l->keys[i]), "leaf key out of its range");
        if (i > 0) CQ_CHECK(l->keys[i - 1] < l->keys[i], "leaf keys out of order");
      }
      *n_entries += static_cast<size_t>(l->count);
      return;
    }
    auto* in = static_cast<const Inner*>(n);
    CQ_CHECK(in->count <= kInnerCap, "inner node overfull");
    for (int i = 0; i <= in->count; ++i) {
      CQ_CHECK(in->kids[i]->parent == in, "wrong parent pointer");
      const IndexKey* clo = i == 0 ? lo : &in->keys[i - 1];
      const IndexKey* chi = i == in->count ? hi : &in->keys[i];
      Check(in->kids[i], clo, chi, n_entries);
    }
  }

  Node* root_;
  size_t size_ = 0;
  IndexKey last_insert_{};  // the key of the last Insert (ascending runs split differently)
};

}  // namespace chronoq::engine
