#include "spec/plain_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/absl_view.h"

namespace permitcheck::spec {

std::string noun_text(bool singular, std::string_view one, std::string_view many) {
  if (singular) return std::string(one);
  if (many.empty()) return absl::StrCat(to_absl(one), "s");
  return std::string(many);
}

std::string acknowledged_text(const std::vector<std::int64_t>& indexes) {
  return absl::StrCat("acknowledged {", absl::StrJoin(indexes, ","), "}");
}

std::string acknowledged_text(const AckSet& a, std::int64_t b) {
  const auto bits = static_cast<std::int64_t>(a.words().size()) * 64;
  if (b <= 0) {
    std::vector<std::int64_t> set;
    for (std::int64_t i = 0; i < bits; ++i) {
      if (a.is_deliverable(i)) set.push_back(i);
    }
    return absl::StrCat("ack set bits {", absl::StrJoin(set, ","), "}");
  }
  std::vector<std::int64_t> acknowledged;
  for (std::int64_t i = 0; i < b; ++i) {
    if (!a.is_deliverable(i)) acknowledged.push_back(i);
  }
  std::vector<std::int64_t> beyond;
  for (std::int64_t i = b; i < bits; ++i) {
    if (a.is_deliverable(i)) beyond.push_back(i);
  }
  std::string out = acknowledged_text(acknowledged);
  if (!beyond.empty()) {
    absl::StrAppend(&out, ", bits {", absl::StrJoin(beyond, ","), "} set beyond B");
  }
  return out;
}

}  // namespace permitcheck::spec
