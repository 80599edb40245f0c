#include "capture/capture_file.h"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <sys/mman.h>
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

// A classic pcap file's records, read in place from memory (the file mapped, or the bytes of
// read_capture_bytes) instead of copied out by libpcap's freads: the records libpcap would
// hand over unchanged, in this machine's byte order, are decoded where they lie; at the first
// record that is not plain (longer than the snapshot length or than libpcap's sanity limit,
// cut by the end of the file) libpcap takes over from that record, so every error and every
// adjustment stays libpcap's own.
class InPlace {
 public:
  // Whether `bytes` (the whole file) can be read in place with `handle` (opened on the same
  // bytes): a pcap (not pcapng) of version 2.4 in this machine's byte order.
  static bool applies(std::string_view bytes, pcap_t* handle) {
    if (bytes.size() < 24 || pcap_is_swapped(handle) != 0 || pcap_major_version(handle) != 2 ||
        pcap_minor_version(handle) != 4) {
      return false;
    }
    const std::uint32_t magic = u32(bytes.data());
    return magic == 0xA1B2C3D4 || magic == 0xA1B23C4D;
  }

  // How often the reader says how far it is (release).
  static constexpr std::size_t kReleaseEvery = std::size_t{8} << 20;

  // REQUIRES: applies(bytes, handle). `release(n)`: the first n bytes are no longer needed.
  InPlace(std::string_view bytes, pcap_t* handle, std::function<void(std::size_t)> release)
      : bytes_(bytes),
        nanoseconds_(u32(bytes.data()) == 0xA1B23C4D),
        snapshot_(static_cast<std::uint32_t>(std::max(pcap_snapshot(handle), 0))),
        release_(std::move(release)) {}

  // Feeds the plain records from the first one on; returns the offset of the first record left
  // to libpcap (the file's size when every record was plain), counting them in *packets.
  std::size_t read(LinkType link, WireTraceBuilder* builder, std::uint64_t* packets) {
    // libpcap's sanity limit for the link types we decode (MAXIMUM_SNAPLEN).
    constexpr std::uint32_t kMaxCaplen = 262144;
    constexpr std::size_t kPrefetchBytes = 4096;
    std::size_t at = 24;
    std::size_t prefetched = at;
    std::size_t released = 0;
    release_(0);
    TcpSegment segment;
    const char* data = bytes_.data();
    while (bytes_.size() - at >= 16) {
      const std::uint32_t caplen = u32(data + at + 8);
      if (caplen > snapshot_ || caplen > kMaxCaplen || bytes_.size() - at - 16 < caplen) break;
      // The time stamp as record_time reads libpcap's: unsigned 32-bit seconds (a classic
      // pcap's seconds run past 2038-01-19 unsigned), nanoseconds divided down to microseconds.
      const std::uint32_t sec = u32(data + at);
      auto sub = static_cast<std::int32_t>(u32(data + at + 4));
      if (nanoseconds_) sub /= 1000;
      const double time = static_cast<double>(sec) + static_cast<double>(sub) / 1e6;
      const std::uint32_t len = u32(data + at + 12);
      ++*packets;
      if (parse_packet_into(link, std::string_view(data + at + 16, caplen), len, &segment)) {
        builder->on_segment(time, segment);
      }
      at += 16 + std::size_t{caplen};
      // The bytes a few records ahead, asked for now: the checksum of a payload is the first to
      // read it, and would otherwise wait for memory line by line.
      const std::size_t want = std::min(at + kPrefetchBytes, bytes_.size());
      for (; prefetched < want; prefetched += 64) __builtin_prefetch(data + prefetched);
      if (at - released >= kReleaseEvery) {
        released = at;
        release_(released);
      }
    }
    return at;
  }

 private:
  static std::uint32_t u32(const char* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }

  std::string_view bytes_;
  bool nanoseconds_;
  std::uint32_t snapshot_;
  std::function<void(std::size_t)> release_;
};

// A regular file mapped read-only, for InPlace; empty when it cannot be mapped. Pages behind
// the reader are given back (release), so resident memory stays a few MiB.
class MappedFile {
 public:
  explicit MappedFile(std::FILE* file) {
    struct stat st{};
    if (fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 24) return;
    void* p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE,
                   fileno(file), 0);
    if (p == MAP_FAILED) return;
    data_ = static_cast<char*>(p);
    size_ = static_cast<std::size_t>(st.st_size);
    madvise(data_, size_, MADV_SEQUENTIAL);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) munmap(data_, size_);
  }

  std::string_view bytes() const { return {data_, size_}; }

  // The first `n` bytes will not be read again: their pages are given back, and the next
  // `window` bytes are mapped in one call rather than a page fault every few pages (kernels
  // without MADV_POPULATE_READ fault them in as before).
  void release(std::size_t n, std::size_t window) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t whole = n / page * page;
    if (whole > 0) madvise(data_, whole, MADV_DONTNEED);
#ifdef MADV_POPULATE_READ
    if (whole < size_) madvise(data_ + whole, std::min(window, size_ - whole), MADV_POPULATE_READ);
#endif
  }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

// Reads every packet of an opened handle; closes it. With `in_place` (InPlace::applies), the
// plain records are read from those bytes and libpcap reads from the first other one on.
absl::Status read_all(pcap_t* handle, WireTraceBuilder* builder, InPlace* in_place = nullptr) {
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
  if (in_place != nullptr) {
    const std::size_t stop = in_place->read(*link, builder, &packets);
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
    TcpSegment segment;  // its payload is at `at` in the batch's bytes (a view once handed over)
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
      r.segment.payload = std::string_view(batch.bytes.data() + r.at, r.segment.payload.size());
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
  // A plain pcap is read in place from the mapped file, on this thread: with no copies left
  // to overlap, a reader thread would only add hand-overs.
  MappedFile mapped(file);
  if (!mapped.bytes().empty() && InPlace::applies(mapped.bytes(), handle)) {
    InPlace in_place(mapped.bytes(), handle,
                     [&](std::size_t n) { mapped.release(n, InPlace::kReleaseEvery); });
    return read_all(handle, builder, &in_place);
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
    InPlace reader(bytes, handle, [](std::size_t) {});
    return read_all(handle, builder, &reader);
  }
  return read_all(handle, builder);
}

}  // namespace permitcheck::capture
