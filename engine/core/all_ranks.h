// Agreement before a collective step: a point that cannot be prepared on one rank must be
// skipped on every rank, or the others wait forever in their first message.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/group.h"

namespace commatlas {

// Runs make() on every rank. If it throws Skip (or runs out of memory) anywhere, every rank
// throws Skip, with the local reason where there is one. Other errors propagate after the
// agreement, so no rank is left behind in the vote.
template <typename Make>
auto make_on_all_ranks(Group& group, Make&& make) -> decltype(make()) {
  std::string why;
  std::exception_ptr failure;
  decltype(make()) made{};
  try {
    made = make();
  } catch (const Skip& s) {
    why = s.what();
  } catch (const std::bad_alloc&) {
    why = "host allocation failed";
  } catch (...) {
    failure = std::current_exception();
    why = "failed on this rank";
  }
  if (!group.all(why.empty())) {
    if (failure) std::rethrow_exception(failure);
    throw Skip(why.empty() ? "could not be prepared on another rank" : why);
  }
  return made;
}

}  // namespace commatlas
