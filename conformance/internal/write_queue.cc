#include "conformance/internal/write_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace permitcheck::conformance::internal {

WriteQueue::WriteQueue(asio::ip::tcp::socket& socket, std::size_t max_bytes)
    : socket_(socket), max_bytes_(max_bytes) {}

absl::Status WriteQueue::push(std::string bytes, std::shared_ptr<void> owner,
                              std::function<void()> on_failure) {
  if (closed_ || bytes.empty()) return absl::OkStatus();
  if (max_bytes_ > 0 && queued_bytes_ + bytes.size() > max_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat(queued_bytes_ + bytes.size(), " bytes would wait to be written, more than ",
                     max_bytes_));
  }
  queued_bytes_ += bytes.size();
  writes_.push_back(std::move(bytes));
  if (!writing_) write_next(std::move(owner), std::move(on_failure));
  return absl::OkStatus();
}

void WriteQueue::write_next(std::shared_ptr<void> owner, std::function<void()> on_failure) {
  if (writes_.empty() || closed_) {
    writing_ = false;
    return;
  }
  writing_ = true;
  // The buffer stays valid: writes_ is a deque and only its front, once written, is popped.
  asio::async_write(socket_, asio::buffer(writes_.front()),
                    [this, owner = std::move(owner), on_failure = std::move(on_failure)](
                        const asio::error_code& ec, std::size_t) mutable {
                      if (ec) {
                        closed_ = true;
                        on_failure();
                        return;
                      }
                      queued_bytes_ -= writes_.front().size();
                      writes_.pop_front();
                      write_next(std::move(owner), std::move(on_failure));
                    });
}

}  // namespace permitcheck::conformance::internal
