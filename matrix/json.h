// matrix.json: the matrix in its versioned JSON form ("schema": "permitcheck-matrix/1",
// documented by docs/schemas/matrix.schema.json), written and read with nlohmann-json. A
// shard writes it, `permitcheck matrix merge` reads the shards' back, so the round trip keeps
// every field the renderers use.
//
//   std::string text = to_json(m);                    // pretty, 2-space indent, '\n' at end
//   absl::StatusOr<Matrix> back = from_json(text);    // back->cells == m.cells (every field)
//
// Guarantees: from_json(to_json(m)) renders the same page, markdown and JUnit as m; a document
// of another schema, or one missing a required field, is InvalidArgument naming the field. No
// exception leaves this module. Linear in the document's size.
#ifndef PERMITCHECK_MATRIX_JSON_H_
#define PERMITCHECK_MATRIX_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "matrix/matrix.h"

namespace permitcheck::matrix {

inline constexpr std::string_view kSchema = "permitcheck-matrix/2";

std::string to_json(const Matrix& m);
absl::StatusOr<Matrix> from_json(std::string_view text);

}  // namespace permitcheck::matrix

#endif  // PERMITCHECK_MATRIX_JSON_H_
