// A tiny HTTP/1.1 client for the broker's admin REST API: one request per connection
// (Connection: close), plain HTTP only, a bounded wait, the response body decoded when chunked.
//
//   absl::StatusOr<HttpUrl> admin = parse_http_url("http://127.0.0.1:8080");
//   absl::StatusOr<HttpResponse> r = http_request(*admin, "GET", "/admin/v2/clusters");
//   if (r.ok() && r->status == 200) use(r->body);
//
// Guarantees: returns within `timeout` (DeadlineExceeded); never throws; a response larger than
// 16 MiB is an error (ResourceExhausted), so memory is bounded.
#ifndef PERMITCHECK_REALBROKER_HTTP_H_
#define PERMITCHECK_REALBROKER_HTTP_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace permitcheck::realbroker {

struct HttpUrl {
  std::string host;
  std::uint16_t port = 80;
  std::string base_path;  // without a trailing slash; often empty
};

// "http://HOST[:PORT][/BASE]". InvalidArgument for anything else (https is not supported).
absl::StatusOr<HttpUrl> parse_http_url(std::string_view url);

struct HttpResponse {
  int status = 0;
  std::string body;
};

// `path` is appended to the URL's base path. Unavailable when the connection fails.
absl::StatusOr<HttpResponse> http_request(const HttpUrl& url, std::string_view method,
                                          std::string_view path, std::string_view body = "",
                                          std::chrono::milliseconds timeout =
                                              std::chrono::milliseconds(10000));

// Decodes a chunked body; InvalidArgument when malformed. Exposed for tests.
absl::StatusOr<std::string> decode_chunked(std::string_view body);

}  // namespace permitcheck::realbroker

#endif  // PERMITCHECK_REALBROKER_HTTP_H_
