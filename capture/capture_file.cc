#include "capture/capture_file.h"

#include <pcap/pcap.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
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

// Reads every packet of an opened handle; closes it.
absl::Status read_all(pcap_t* handle, WireTraceBuilder* builder) {
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
  // Both close the handle (and the file) before `buffer` goes.
  return reader_thread ? read_all_overlapped(handle, builder) : read_all(handle, builder);
}

absl::Status read_capture_bytes(std::string_view bytes, WireTraceBuilder* builder) {
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
  return read_all(handle, builder);
}

}  // namespace permitcheck::capture
