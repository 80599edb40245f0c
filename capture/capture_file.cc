#include "capture/capture_file.h"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace permitcheck::capture {
namespace {

// A record's time in seconds since the epoch. A classic pcap stores seconds as an unsigned
// 32-bit number, which libpcap hands back signed: from 2038-01-19T03:14:08Z on they come
// negative, and are taken as the unsigned count they are (no capture predates 1970).
double record_time(const pcap_pkthdr& h) {
  double secs = static_cast<double>(h.ts.tv_sec);
  if (h.ts.tv_sec < 0) secs += 4294967296.0;
  return secs + static_cast<double>(h.ts.tv_usec) / 1e6;
}

// A classic pcap file's records, decoded where they lie in memory (the bytes of
// read_capture_bytes, or a window of the file read with pread) instead of copied out one by
// one by libpcap's freads: the records libpcap would hand over unchanged, in this machine's
// byte order, are decoded in place; at the first record that is not plain (longer than the
// snapshot length or than libpcap's sanity limit, cut by the end of the file) libpcap takes
// over from that record, so every error and every adjustment stays libpcap's own.
class InPlace {
 public:
  // Whether a capture whose first bytes are `head` can be read in place with `handle` (opened
  // on the same bytes): a pcap (not pcapng) of version 2.4 in this machine's byte order.
  static bool applies(std::string_view head, pcap_t* handle) {
    if (head.size() < 24 || pcap_is_swapped(handle) != 0 || pcap_major_version(handle) != 2 ||
        pcap_minor_version(handle) != 4) {
      return false;
    }
    const std::uint32_t magic = u32(head.data());
    return magic == 0xA1B2C3D4 || magic == 0xA1B23C4D;
  }

  // libpcap's sanity limit for the link types we decode (MAXIMUM_SNAPLEN): no plain record is
  // longer than 16 bytes of header and this.
  static constexpr std::size_t kMaxCaplen = 262144;

  // REQUIRES: applies(head, handle).
  InPlace(std::string_view head, pcap_t* handle, LinkType link, WireTraceBuilder* builder)
      : nanoseconds_(u32(head.data()) == 0xA1B23C4D),
        snapshot_(static_cast<std::uint32_t>(std::max(pcap_snapshot(handle), 0))),
        link_(link),
        builder_(builder) {}

  // Feeds the whole plain records at the start of `bytes` (at offset `base` of the capture:
  // the segments' origin), counting them in packets(); returns how many bytes they take.
  // `plain_ended` is set when the first record left is not plain (rather than merely not
  // wholly in `bytes`).
  std::size_t read(std::string_view bytes, std::uint64_t base, bool* plain_ended) {
    std::size_t at = 0;
    const char* data = bytes.data();
    *plain_ended = false;
    while (bytes.size() - at >= 16) {
      const std::uint32_t caplen = u32(data + at + 8);
      if (caplen > snapshot_ || caplen > kMaxCaplen) {
        *plain_ended = true;
        break;
      }
      if (bytes.size() - at - 16 < caplen) break;
      // The time stamp as record_time reads libpcap's: unsigned 32-bit seconds (a classic
      // pcap's seconds run past 2038-01-19 unsigned), nanoseconds divided down to microseconds.
      const std::uint32_t sec = u32(data + at);
      auto sub = static_cast<std::int32_t>(u32(data + at + 4));
      if (nanoseconds_) sub /= 1000;
      const double time = static_cast<double>(sec) + static_cast<double>(sub) / 1e6;
      const std::uint32_t len = u32(data + at + 12);
      ++packets_;
      if (parse_packet_into(link_, std::string_view(data + at + 16, caplen), len, &segment_)) {
        segment_.origin = base + static_cast<std::uint64_t>(segment_.payload.data() - data);
        builder_->on_segment(time, segment_);
      }
      at += 16 + std::size_t{caplen};
    }
    return at;
  }

  std::uint64_t packets() const { return packets_; }

 private:
  static std::uint32_t u32(const char* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }

  bool nanoseconds_;
  std::uint32_t snapshot_;
  LinkType link_;
  WireTraceBuilder* builder_;
  TcpSegment segment_;
  std::uint64_t packets_ = 0;
};

// The plain records of a regular file, from offset 24 on, read with pread(2) into a window
// and decoded there (InPlace). The file is never mapped: one truncated while it is read gives
// short reads, not a SIGBUS; the reading ends where its bytes end and libpcap takes over
// there. Returns the offset of the first record left to libpcap; memory: one window.
std::size_t read_file_in_place(int fd, InPlace* in_place) {
  // Larger than any plain record (so every refill makes progress), small enough to stay in
  // the cache between the copy and the decoding.
  constexpr std::size_t kWindow = std::size_t{1} << 19;
  static_assert(kWindow >= 16 + InPlace::kMaxCaplen);
  const std::unique_ptr<char[]> window(new char[kWindow]);  // not zeroed: pread fills it
  std::size_t start = 24;  // file offset of window[0]
  std::size_t have = 0;
  while (true) {
    ssize_t n;
    do {
      n = pread(fd, window.get() + have, kWindow - have, static_cast<off_t>(start + have));
    } while (n < 0 && errno == EINTR);
    if (n <= 0) break;  // the end of the file (or an error libpcap will report)
    have += static_cast<std::size_t>(n);
    bool plain_ended = false;
    const std::size_t used =
        in_place->read(std::string_view(window.get(), have), start, &plain_ended);
    start += used;
    have -= used;
    if (plain_ended) break;
    std::memmove(window.get(), window.get() + used, have);  // a part of one record at most
  }
  return start;
}

// How the plain records at the start of a capture are read in place: hands them to the
// InPlace reader and returns the offset of the first record left to libpcap.
using ReadInPlace = std::function<std::size_t(InPlace&)>;

// Reads every packet of an opened handle; closes it. With `in_place` (InPlace::applies to
// `head`, the capture's first bytes), the plain records are read by it and libpcap reads from
// the first other one on.
absl::Status read_all(pcap_t* handle, WireTraceBuilder* builder, std::string_view head = {},
                      const ReadInPlace& in_place = nullptr) {
  const int dlt = pcap_datalink(handle);
  const std::optional<LinkType> link = link_type_from_dlt(dlt);
  if (!link) {
    pcap_close(handle);
    const char* name = pcap_datalink_val_to_name(dlt);
    return absl::InvalidArgumentError(absl::StrCat("link type ", dlt, " (", name ? name : "?",
                                                   ") is not one we decode (Ethernet, Linux "
                                                   "cooked SLL/SLL2, loopback, raw IP)"));
  }
  std::uint64_t packets = 0;
  if (in_place) {
    InPlace reader(head, handle, *link, builder);
    const std::size_t stop = in_place(reader);
    packets = reader.packets();
    if (std::fseek(pcap_file(handle), static_cast<long>(stop), SEEK_SET) != 0) {
      pcap_close(handle);
      builder->finish();
      return absl::InvalidArgumentError(absl::StrCat("after packet ", packets, ": cannot seek"));
    }
  }
  TcpSegment segment;
  while (true) {
    pcap_pkthdr* header = nullptr;
    const u_char* data = nullptr;
    const int rc = pcap_next_ex(handle, &header, &data);
    if (rc == PCAP_ERROR_BREAK) break;  // end of file
    if (rc != 1) {
      std::string why = pcap_geterr(handle);
      pcap_close(handle);
      builder->finish();
      return absl::InvalidArgumentError(
          absl::StrCat("after packet ", packets, ": ", why.empty() ? "unreadable" : why));
    }
    ++packets;
    const double time = record_time(*header);
    const std::string_view bytes(reinterpret_cast<const char*>(data), header->caplen);
    if (parse_packet_into(*link, bytes, header->len, &segment)) builder->on_segment(time, segment);
  }
  pcap_close(handle);
  builder->finish();
  return absl::OkStatus();
}

// The same, with reading overlapped: a second thread pulls the records out of libpcap (its
// freads and copies are a quarter of the work) and decodes their headers, into batches of TCP
// segments, payloads copied, that this thread reassembles and checks. At most kBatches batches
// of about kBatchBytes exist, so memory stays constant; batches are large so that handing one
// over (a futex wake) is rare.
absl::Status read_all_overlapped(pcap_t* handle, WireTraceBuilder* builder) {
  constexpr std::size_t kBatchBytes = 1024 * 1024;
  constexpr std::size_t kBatches = 3;
  const int dlt = pcap_datalink(handle);
  const std::optional<LinkType> link = link_type_from_dlt(dlt);
  if (!link) return read_all(handle, builder);  // says why
  struct Record {
    double time;
    TcpSegment segment;  // its TCP header and payload are at `at` in the batch's bytes (views
                         // once handed over)
    std::size_t at;
  };
  struct Batch {
    std::string bytes;
    std::vector<Record> records;
  };
  std::mutex mu;
  std::condition_variable changed;
  std::deque<Batch> full;
  std::vector<Batch> empty(kBatches);
  bool done = false;
  std::string error;  // set by the reader when a record cannot be read
  std::uint64_t packets = 0;
  std::thread reader([&] {
    Batch batch;
    auto hand_over = [&] {
      std::unique_lock<std::mutex> lock(mu);
      full.push_back(std::move(batch));
      changed.notify_one();
      changed.wait(lock, [&] { return !empty.empty(); });
      batch = std::move(empty.back());
      empty.pop_back();
      batch.bytes.clear();
      batch.records.clear();
    };
    {
      std::lock_guard<std::mutex> lock(mu);
      batch = std::move(empty.back());
      empty.pop_back();
    }
    TcpSegment segment;
    while (true) {
      pcap_pkthdr* header = nullptr;
      const u_char* data = nullptr;
      const int rc = pcap_next_ex(handle, &header, &data);
      if (rc == PCAP_ERROR_BREAK) break;  // end of file
      if (rc != 1) {
        const std::string why = pcap_geterr(handle);
        error = absl::StrCat("after packet ", packets, ": ", why.empty() ? "unreadable" : why);
        break;
      }
      ++packets;
      const std::string_view bytes(reinterpret_cast<const char*>(data), header->caplen);
      if (!parse_packet_into(*link, bytes, header->len, &segment)) continue;
      batch.records.push_back(Record{record_time(*header), segment, batch.bytes.size()});
      batch.bytes.append(segment.tcp_header);
      batch.bytes.append(segment.payload);
      if (batch.bytes.size() >= kBatchBytes) hand_over();
    }
    std::lock_guard<std::mutex> lock(mu);
    full.push_back(std::move(batch));
    done = true;
    changed.notify_one();
  });
  while (true) {
    Batch batch;
    {
      std::unique_lock<std::mutex> lock(mu);
      changed.wait(lock, [&] { return !full.empty() || done; });
      if (full.empty()) break;
      batch = std::move(full.front());
      full.pop_front();
    }
    for (Record& r : batch.records) {
      const char* at = batch.bytes.data() + r.at;
      r.segment.tcp_header = std::string_view(at, r.segment.tcp_header.size());
      r.segment.payload = std::string_view(at + r.segment.tcp_header.size(), r.segment.payload.size());
      builder->on_segment(r.time, r.segment);
    }
    std::lock_guard<std::mutex> lock(mu);
    empty.push_back(std::move(batch));
    changed.notify_one();
  }
  reader.join();
  pcap_close(handle);
  builder->finish();
  if (!error.empty()) return absl::InvalidArgumentError(error);
  return absl::OkStatus();
}

}  // namespace

bool is_capture_magic(std::string_view head) {
  if (head.size() < 4) return false;
  auto is = [&](std::uint32_t m) {
    const char be[4] = {static_cast<char>(m >> 24), static_cast<char>(m >> 16),
                        static_cast<char>(m >> 8), static_cast<char>(m)};
    const char le[4] = {be[3], be[2], be[1], be[0]};
    return head.substr(0, 4) == std::string_view(be, 4) || head.substr(0, 4) == std::string_view(le, 4);
  };
  return is(0xA1B2C3D4) || is(0xA1B23C4D) || is(0x0A0D0D0A);
}

bool looks_like_capture(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char head[4];
  return file.read(head, 4) && is_capture_magic(std::string_view(head, 4));
}

absl::Status read_capture_file(const std::string& path, WireTraceBuilder* builder,
                               bool reader_thread) {
  // libpcap reads a record with two freads: a 1 MiB stdio buffer instead of the default 4 KiB
  // makes that a read(2) per MiB rather than per page.
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  constexpr std::size_t kBuffer = std::size_t{1} << 20;
  const std::unique_ptr<char[]> buffer(new char[kBuffer]);  // not zeroed: stdio fills it
  std::setvbuf(file, buffer.get(), _IOFBF, kBuffer);
  char err[PCAP_ERRBUF_SIZE] = "";
  pcap_t* handle = pcap_fopen_offline(file, err);  // owns `file` from here
  if (handle == nullptr) {
    std::fclose(file);
    return absl::InvalidArgumentError(err);
  }
  // A plain pcap in a regular file is read in place (read_file_in_place), on this thread: with
  // no copies left to overlap, a reader thread would only add hand-overs.
  const int fd = fileno(file);
  struct stat st{};
  char head[24];
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, head, 24, 0) == 24 &&
      InPlace::applies(std::string_view(head, 24), handle)) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    // A file that shrinks while it is read could end at a record's end: its reading ends
    // without an error from libpcap, so the size is looked at again afterwards (on a copy of
    // the descriptor: read_all closes the file).
    const int watch = dup(fd);
    // The payloads kept to compare copies are read again from the file (read_all closes `fd`).
    builder->set_payload_source([watch](std::uint64_t origin, std::size_t n, char* out) {
      for (std::size_t got = 0; got < n;) {
        const ssize_t r = pread(watch, out + got, n - got, static_cast<off_t>(origin + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += static_cast<std::size_t>(r);
      }
      return true;
    });
    absl::Status s = read_all(handle, builder, std::string_view(head, 24),
                              [fd](InPlace& reader) { return read_file_in_place(fd, &reader); });
    struct stat after{};
    if (watch >= 0 && fstat(watch, &after) == 0 && after.st_size < st.st_size) {
      s = absl::InvalidArgumentError(absl::StrCat(
          path, ": the file shrank from ", st.st_size, " to ", after.st_size,
          " bytes while it was read: its end was not read",
          s.ok() ? "" : absl::StrCat(" (", s.message(), ")")));
    }
    builder->set_payload_source(nullptr);
    if (watch >= 0) ::close(watch);
    return s;
  }
  // Both close the handle (and the file) before `buffer` goes.
  return reader_thread ? read_all_overlapped(handle, builder) : read_all(handle, builder);
}

absl::Status read_capture_bytes(std::string_view bytes, WireTraceBuilder* builder,
                                bool in_place) {
  // fmemopen of an empty buffer is undefined; an empty capture is an error anyway.
  if (bytes.empty()) return absl::InvalidArgumentError("empty capture");
  std::FILE* file = fmemopen(const_cast<char*>(bytes.data()), bytes.size(), "rb");
  if (file == nullptr) return absl::InternalError("fmemopen failed");
  char err[PCAP_ERRBUF_SIZE] = "";
  pcap_t* handle = pcap_fopen_offline(file, err);  // owns `file` from here
  if (handle == nullptr) {
    std::fclose(file);
    return absl::InvalidArgumentError(err);
  }
  if (in_place && InPlace::applies(bytes, handle)) {
    builder->set_payload_source([bytes](std::uint64_t origin, std::size_t n, char* out) {
      if (origin > bytes.size() || n > bytes.size() - origin) return false;
      std::memcpy(out, bytes.data() + origin, n);
      return true;
    });
    absl::Status s = read_all(handle, builder, bytes, [bytes](InPlace& reader) {
      bool plain_ended = false;
      return 24 + reader.read(bytes.substr(24), 24, &plain_ended);
    });
    builder->set_payload_source(nullptr);
    return s;
  }
  return read_all(handle, builder);
}

}  // namespace permitcheck::capture
