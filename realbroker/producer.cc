#include "realbroker/producer.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "protocol/frame.h"
#include "protocol/proto/pulsar_wire.pb.h"
#include "realbroker/proto/producer_wire.pb.h"
#include "base/absl_view.h"

namespace permitcheck::realbroker {
namespace {

using Clock = std::chrono::steady_clock;
using wire::Command;

void put_u32(std::string& out, std::uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(b, 4);
}

std::uint32_t get_u32(const char* p) {
  return (std::uint32_t{static_cast<unsigned char>(p[0])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(p[1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(p[2])} << 8) |
         std::uint32_t{static_cast<unsigned char>(p[3])};
}

// [total][command size][command], then for a SEND [magic][crc32c][metadata size][metadata]
// [payload], the checksum over everything after it.
std::string encode(const Command& command, const std::string& metadata = "",
                   const std::string& payload = "") {
  const std::string cmd = command.SerializeAsString();
  std::string tail;
  if (!metadata.empty()) {
    std::string checked;
    put_u32(checked, static_cast<std::uint32_t>(metadata.size()));
    checked += metadata;
    checked += payload;
    tail.push_back(static_cast<char>(protocol::kMagicCrc32c >> 8));
    tail.push_back(static_cast<char>(protocol::kMagicCrc32c & 0xff));
    put_u32(tail, protocol::crc32c(checked));
    tail += checked;
  }
  std::string out;
  put_u32(out, static_cast<std::uint32_t>(4 + cmd.size() + tail.size()));
  put_u32(out, static_cast<std::uint32_t>(cmd.size()));
  return out + cmd + tail;
}

absl::StatusOr<int> connect_to(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc) {
    return absl::UnavailableError(absl::StrCat("resolve ", host, ": ", ::gai_strerror(rc)));
  }
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("connect ", host, ":", port, ": ",
                                               std::strerror(errno)));
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

absl::Status broker_error(const Command& c, std::string_view what) {
  if (c.type() == Command::ERROR) {
    return absl::FailedPreconditionError(
        absl::StrCat(to_absl(what), ": broker error ", c.error().error(), ": ",
                     c.error().message()));
  }
  if (c.type() == Command::SEND_ERROR) {
    return absl::FailedPreconditionError(absl::StrCat(
        to_absl(what), ": broker send error ", c.send_error().error(), ": ",
        c.send_error().message()));
  }
  return absl::FailedPreconditionError(
      absl::StrCat(to_absl(what), ": unexpected command ", Command::Type_Name(c.type())));
}

}  // namespace

absl::StatusOr<std::unique_ptr<BatchProducer>> BatchProducer::open(
    const std::string& host, std::uint16_t port, const std::string& topic,
    std::chrono::milliseconds timeout) {
  absl::StatusOr<int> fd = connect_to(host, port);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<BatchProducer> p(new BatchProducer(*fd, timeout));
  Command connect;
  connect.set_type(Command::CONNECT);
  connect.mutable_connect()->set_client_version("permitcheck-real-broker-producer");
  connect.mutable_connect()->set_protocol_version(19);
  Command producer;
  producer.set_type(Command::PRODUCER);
  producer.mutable_producer()->set_topic(topic);
  producer.mutable_producer()->set_producer_id(p->producer_id_);
  producer.mutable_producer()->set_request_id(p->request_id_++);
  for (const Command* request : {&connect, &producer}) {
    if (absl::Status s = p->write_all(encode(*request)); !s.ok()) return s;
    absl::StatusOr<std::string> raw = p->read_command();
    if (!raw.ok()) return raw.status();
    Command reply;
    reply.ParseFromString(*raw);
    const Command::Type want =
        request == &connect ? Command::CONNECTED : Command::PRODUCER_SUCCESS;
    if (reply.type() != want) return broker_error(reply, "opening the producer");
    if (want == Command::PRODUCER_SUCCESS) p->name_ = reply.producer_success().producer_name();
  }
  return p;
}

BatchProducer::~BatchProducer() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status BatchProducer::write_all(const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> BatchProducer::read_command() {
  const Clock::time_point deadline = Clock::now() + timeout_;
  std::string buffer;
  auto fill = [&](std::size_t want) -> absl::Status {
    char chunk[4096];
    while (buffer.size() < want) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd pfd{.fd = fd_, .events = POLLIN, .revents = 0};
      if (left.count() <= 0 || ::poll(&pfd, 1, static_cast<int>(left.count())) == 0) {
        return absl::DeadlineExceededError("no answer from the broker in time");
      }
      const ssize_t n = ::recv(fd_, chunk, std::min(sizeof chunk, want - buffer.size()), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return absl::UnavailableError("the broker closed the producer's connection");
      buffer.append(chunk, static_cast<std::size_t>(n));
    }
    return absl::OkStatus();
  };
  while (true) {
    buffer.clear();
    if (absl::Status s = fill(8); !s.ok()) return s;
    const std::uint32_t total = get_u32(buffer.data());
    const std::uint32_t cmd_size = get_u32(buffer.data() + 4);
    if (total < 4 || total > protocol::kMaxFrameSize || cmd_size > total - 4) {
      return absl::DataLossError("the broker sent a malformed frame");
    }
    if (absl::Status s = fill(std::size_t{total} + 4); !s.ok()) return s;
    std::string cmd = buffer.substr(8, cmd_size);
    Command c;
    if (c.ParseFromString(cmd) && c.type() == Command::PING) {
      Command pong;
      pong.set_type(Command::PONG);
      pong.mutable_pong();
      if (absl::Status s = write_all(encode(pong)); !s.ok()) return s;
      continue;
    }
    return cmd;
  }
}

absl::StatusOr<EntryPosition> BatchProducer::send_batch(int size) {
  if (size < 1 || size > 10000) return absl::InvalidArgumentError("batch size out of 1..10000");
  const std::uint64_t sequence = sequence_++;
  std::vector<protocol::BatchMessage> messages(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) {
    messages[i].payload = absl::StrCat("permitcheck-", sequence, "-", i);
    messages[i].metadata.set_payload_size(static_cast<int>(messages[i].payload.size()));
  }
  const std::string payload = protocol::encode_batch(messages);
  permitcheck::wire::MessageMetadata meta;
  meta.set_producer_name(name_);
  meta.set_sequence_id(sequence);
  meta.set_publish_time(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch()).count()));
  meta.set_num_messages_in_batch(size);
  meta.set_uncompressed_size(static_cast<std::uint32_t>(payload.size()));
  Command send;
  send.set_type(Command::SEND);
  send.mutable_send()->set_producer_id(producer_id_);
  send.mutable_send()->set_sequence_id(sequence);
  send.mutable_send()->set_num_messages(size);
  if (absl::Status s = write_all(encode(send, meta.SerializeAsString(), payload)); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> raw = read_command();
  if (!raw.ok()) return raw.status();
  Command reply;
  reply.ParseFromString(*raw);
  if (reply.type() != Command::SEND_RECEIPT || reply.send_receipt().sequence_id() != sequence) {
    return broker_error(reply, absl::StrCat("publishing entry ", sequence));
  }
  messages_sent_ += static_cast<std::uint64_t>(size);
  return EntryPosition{.ledger = reply.send_receipt().message_id().ledgerid(),
                       .entry = reply.send_receipt().message_id().entryid()};
}

absl::Status BatchProducer::close() {
  Command close;
  close.set_type(Command::CLOSE_PRODUCER);
  close.mutable_close_producer()->set_producer_id(producer_id_);
  close.mutable_close_producer()->set_request_id(request_id_++);
  absl::Status result = write_all(encode(close));
  if (result.ok()) {
    absl::StatusOr<std::string> raw = read_command();
    Command reply;
    if (!raw.ok()) {
      result = raw.status();
    } else if (reply.ParseFromString(*raw); reply.type() != Command::SUCCESS) {
      result = broker_error(reply, "closing the producer");
    }
  }
  ::close(fd_);
  fd_ = -1;
  return result;
}

}  // namespace permitcheck::realbroker
