#include "realbroker/http.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "asio.hpp"
#include "base/absl_view.h"

namespace permitcheck::realbroker {
namespace {

constexpr std::size_t kMaxResponse = std::size_t{16} << 20;

// Splits "STATUS-LINE\r\nHEADERS\r\n\r\nBODY" into the status, whether chunked, and the body.
absl::StatusOr<HttpResponse> parse_response(std::string_view raw) {
  const std::size_t end = raw.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    return absl::InvalidArgumentError("HTTP response without the end of its headers");
  }
  const std::string_view head = raw.substr(0, end);
  const std::string_view status_line = head.substr(0, head.find("\r\n"));
  int status = 0;
  if (status_line.substr(0, 7) != "HTTP/1." || status_line.size() < 12 ||
      !absl::SimpleAtoi(to_absl(status_line.substr(9, 3)), &status)) {
    return absl::InvalidArgumentError(absl::StrCat("bad HTTP status line: ", to_absl(status_line)));
  }
  const std::string lower = absl::AsciiStrToLower(to_absl(head));
  HttpResponse out{.status = status, .body = std::string(raw.substr(end + 4))};
  if (absl::StrContains(lower, "transfer-encoding: chunked")) {
    absl::StatusOr<std::string> body = decode_chunked(out.body);
    if (!body.ok()) return body.status();
    out.body = *std::move(body);
  }
  return out;
}

}  // namespace

absl::StatusOr<HttpUrl> parse_http_url(std::string_view url) {
  if (url.substr(0, 7) != "http://") {
    return absl::InvalidArgumentError(absl::StrCat("not an http:// URL: ", to_absl(url)));
  }
  const std::string_view whole = url;
  url.remove_prefix(7);
  HttpUrl out;
  const std::size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = url.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    out.base_path = std::string(path);
  }
  const std::size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos) {
    std::uint32_t port = 0;
    if (!absl::SimpleAtoi(to_absl(authority.substr(colon + 1)), &port) || port == 0 ||
        port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("bad port in URL: ", to_absl(whole)));
    }
    out.port = static_cast<std::uint16_t>(port);
    authority = authority.substr(0, colon);
  }
  if (authority.empty()) return absl::InvalidArgumentError("URL without a host");
  out.host = std::string(authority);
  return out;
}

absl::StatusOr<std::string> decode_chunked(std::string_view body) {
  std::string out;
  while (true) {
    const std::size_t eol = body.find("\r\n");
    if (eol == std::string_view::npos) return absl::InvalidArgumentError("truncated chunk size");
    std::string_view size_text = body.substr(0, eol);
    size_text = size_text.substr(0, size_text.find(';'));  // chunk extensions
    std::uint64_t size = 0;
    if (!absl::SimpleHexAtoi(to_absl(size_text), &size)) {
      return absl::InvalidArgumentError(absl::StrCat("bad chunk size: ", to_absl(size_text)));
    }
    body.remove_prefix(eol + 2);
    if (size == 0) return out;
    if (body.size() < size + 2) return absl::InvalidArgumentError("truncated chunk");
    out.append(body.substr(0, size));
    body.remove_prefix(size + 2);
  }
}

absl::StatusOr<HttpResponse> http_request(const HttpUrl& url, std::string_view method,
                                          std::string_view path, std::string_view body,
                                          std::chrono::milliseconds timeout) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  asio::ip::tcp::resolver resolver(io);
  const std::string request = absl::StrCat(
      to_absl(method), " ", url.base_path, to_absl(path), " HTTP/1.1\r\nHost: ", url.host, ":",
      url.port,
      "\r\nAccept: application/json\r\nConnection: close\r\n",
      body.empty() ? "" : "Content-Type: application/json\r\n", "Content-Length: ", body.size(),
      "\r\n\r\n", to_absl(body));
  std::string raw;
  std::array<char, 8192> buffer;
  std::optional<absl::Status> result;
  std::function<void()> read_more = [&] {
    socket.async_read_some(asio::buffer(buffer), [&](std::error_code ec, std::size_t n) {
      raw.append(buffer.data(), n);
      if (raw.size() > kMaxResponse) {
        result = absl::ResourceExhaustedError("HTTP response above 16 MiB");
      } else if (ec == asio::error::eof) {
        result = absl::OkStatus();
      } else if (ec) {
        result = absl::UnavailableError(absl::StrCat("HTTP read: ", ec.message()));
      } else {
        read_more();
      }
    });
  };
  resolver.async_resolve(url.host, std::to_string(url.port), [&](std::error_code ec, auto eps) {
    if (ec) {
      result = absl::UnavailableError(absl::StrCat("resolve ", url.host, ": ", ec.message()));
      return;
    }
    asio::async_connect(socket, eps, [&](std::error_code ec2, const auto&) {
      if (ec2) {
        result = absl::UnavailableError(
            absl::StrCat("connect ", url.host, ":", url.port, ": ", ec2.message()));
        return;
      }
      asio::async_write(socket, asio::buffer(request), [&](std::error_code ec3, std::size_t) {
        if (ec3) {
          result = absl::UnavailableError(absl::StrCat("HTTP write: ", ec3.message()));
        } else {
          read_more();
        }
      });
    });
  });
  io.run_for(timeout);
  if (!result) {
    return absl::DeadlineExceededError(absl::StrCat("no HTTP answer from ", url.host, ":",
                                                    url.port, " within ", timeout.count(),
                                                    " ms"));
  }
  if (!result->ok()) return *result;
  return parse_response(raw);
}

}  // namespace permitcheck::realbroker
