// Reading packet captures with libpcap: pcap (either byte order, micro- or nanosecond) and
// pcapng, recognised by their first bytes, never by the file name. Each packet is decoded to
// its TCP segment (capture/packet.h) and handed to a WireTraceBuilder.
//
//   if (is_capture_magic(first_four_bytes)) {
//     absl::Status s = read_capture_file("broker.pcap", &builder);  // InvalidArgument: why
//   }
#ifndef PERMITCHECK_CAPTURE_CAPTURE_FILE_H_
#define PERMITCHECK_CAPTURE_CAPTURE_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "capture/wire_trace.h"

namespace permitcheck::capture {

// True when `head` starts with the magic number of a pcap or pcapng file.
bool is_capture_magic(std::string_view head);

// True when the file at `path` starts with a capture's magic number (false if unreadable).
bool looks_like_capture(const std::string& path);

// Feeds every packet of the capture at `path` to `builder`, then calls builder->finish().
// InvalidArgument with the reason for an empty, truncated or garbled file, or a link type we
// do not decode (the packets before a truncation have been fed then). A pcap (not pcapng) in
// this machine's byte order, in a regular file, is read window by window with pread(2) and
// decoded in the window, libpcap reading from the first record that is not plain on (same
// result; memory: one window of 512 KiB). The file is never mapped: one truncated or shrunk
// while it is read never faults (no SIGBUS); its reading ends where its bytes end, and a file
// smaller at the end than at the start is InvalidArgument ("shrank"), the packets read until
// then fed. Otherwise, with `reader_thread`, libpcap reads and the packet headers are decoded
// on a second thread, a few MiB ahead of the reassembly and checking (same result).
absl::Status read_capture_file(const std::string& path, WireTraceBuilder* builder,
                               bool reader_thread = false);

// The same for a capture held in memory (tests, the fuzzer). `in_place` false: every record
// is read by libpcap (the reference the in-place reading is tested against).
absl::Status read_capture_bytes(std::string_view bytes, WireTraceBuilder* builder,
                                bool in_place = true);

}  // namespace permitcheck::capture

#endif  // PERMITCHECK_CAPTURE_CAPTURE_FILE_H_
