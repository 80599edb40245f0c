// Tests of protocol/frame.h: encoding round trips, and a decoder that rejects garbage,
// truncated and oversized frames with a clear status instead of crashing.
#include "protocol/frame.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace permitcheck::protocol {
namespace {

wire::BaseCommand flow_command(std::uint64_t consumer, std::uint32_t permits) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::FLOW);
  c.mutable_flow()->set_consumer_id(consumer);
  c.mutable_flow()->set_messagepermits(permits);
  return c;
}

TEST(Crc32c, KnownCheckValue) { EXPECT_EQ(crc32c("123456789"), 0xE3069283u); }

TEST(Frame, SimpleCommandRoundTrips) {
  const std::string bytes = encode_command(flow_command(3, 1000));
  absl::StatusOr<Frame> f = decode_frame(bytes);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->command.type(), wire::BaseCommand::FLOW);
  EXPECT_EQ(f->command.flow().messagepermits(), 1000u);
  EXPECT_FALSE(f->has_payload);
}

TEST(Frame, MessagePermitsIsField6AndRoundTrips) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::MESSAGE);
  c.mutable_message()->set_consumer_id(0);
  c.mutable_message()->mutable_message_id()->set_ledgerid(7);
  c.mutable_message()->mutable_message_id()->set_entryid(1);
  c.mutable_message()->add_ack_set(37);
  c.mutable_message()->set_message_permits(3);
  EXPECT_EQ(wire::CommandMessage::kMessagePermitsFieldNumber, 6);
  EXPECT_EQ(wire::CommandMessage::kAckSetFieldNumber, 4);

  wire::MessageMetadata meta;
  meta.set_producer_name("p");
  meta.set_sequence_id(1);
  meta.set_publish_time(1);
  meta.set_num_messages_in_batch(8);
  std::vector<BatchMessage> batch(8);
  for (BatchMessage& m : batch) {
    m.payload = "x";
    m.metadata.set_payload_size(1);
  }
  const std::string bytes = encode_message(c, meta.SerializeAsString(), encode_batch(batch));
  absl::StatusOr<Frame> f = decode_frame(bytes);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE(f->has_payload);
  EXPECT_TRUE(f->checksum_ok);
  EXPECT_EQ(f->command.message().message_permits(), 3u);
  absl::StatusOr<MetadataAndPayload> mp = parse_metadata_and_payload(f->metadata_and_payload);
  ASSERT_TRUE(mp.ok()) << mp.status();
  EXPECT_EQ(mp->metadata.num_messages_in_batch(), 8);
  BatchParse parsed = parse_batch(mp->payload, 8);
  EXPECT_EQ(parsed.messages.size(), 8u);
  EXPECT_FALSE(parsed.failed_at.has_value());
}

TEST(Frame, CorruptChecksumIsReportedNotRejected) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::MESSAGE);
  c.mutable_message()->set_consumer_id(0);
  c.mutable_message()->mutable_message_id()->set_ledgerid(7);
  c.mutable_message()->mutable_message_id()->set_entryid(1);
  absl::StatusOr<Frame> f = decode_frame(encode_message(c, "", "payload", /*corrupt_checksum=*/true));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->checksum_ok);
}

TEST(Frame, TruncatedBatchStopsAtTheBrokenMessage) {
  std::vector<BatchMessage> batch(4);
  for (BatchMessage& m : batch) {
    m.payload = "abc";
    m.metadata.set_payload_size(3);
  }
  std::string payload = encode_batch(batch);
  payload.resize(payload.size() - 2);
  BatchParse parsed = parse_batch(payload, 4);
  EXPECT_EQ(parsed.messages.size(), 3u);
  EXPECT_EQ(parsed.failed_at, 3);
}

TEST(Frame, RejectsGarbageTruncatedAndOversizedFrames) {
  EXPECT_FALSE(decode_frame("").ok());
  EXPECT_FALSE(decode_frame(std::string("\x00\x00\x00\x04\x00\x00", 6)).ok());
  // Sizes that disagree with the bytes.
  std::string good = encode_command(flow_command(1, 1));
  EXPECT_FALSE(decode_frame(good.substr(0, good.size() - 1)).ok());
  std::string lying = good;
  lying[7] = static_cast<char>(0x7f);  // command size beyond the frame
  EXPECT_FALSE(decode_frame(lying).ok());
  // A command that does not parse.
  std::string garbage = std::string("\x00\x00\x00\x08\x00\x00\x00\x04\xff\xff\xff\xff", 12);
  absl::StatusOr<Frame> g = decode_frame(garbage);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("does not parse"), std::string::npos) << g.status();
  // A bad magic number after the command.
  std::string bad_magic = good + std::string("\x0e\x07\x00\x00\x00\x00", 6);
  bad_magic[3] = static_cast<char>(bad_magic[3] + 6);
  EXPECT_FALSE(decode_frame(bad_magic).ok());
  // Oversized: the splitter refuses before buffering 4 GiB.
  FrameSplitter s;
  s.append(std::string("\xff\xff\xff\xff", 4));
  absl::StatusOr<std::optional<std::string>> n = s.next();
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("outside"), std::string::npos);
}

// The hardware path (SSE 4.2, where the CPU has it; three joined streams on long inputs)
// agrees with the bitwise definition at every length and alignment.
TEST(Crc32c, AgreesWithTheBitwiseDefinitionAtEveryLengthAndOffset) {
  auto reference = [](std::string_view d) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (unsigned char ch : d) {
      c ^= ch;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
  };
  std::string data(20000, '\0');  // past three 1 KiB blocks, where three streams join
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + 7 + i / 251);
  for (std::size_t off = 0; off < 9; ++off) {
    for (std::size_t n = 0; off + n <= data.size(); n += 1 + n / 16) {
      const std::string_view v = std::string_view(data).substr(off, n);
      ASSERT_EQ(crc32c(v), reference(v)) << "offset " << off << " length " << n;
    }
  }
}

// split() gives the frames next() gives, wherever the stream is cut, viewing in place the
// frames that lie wholly inside one call's bytes; decode_frame_into decodes them as
// decode_frame does, reusing one FrameView.
TEST(FrameSplitter, SplitViewsWholeFramesInPlaceWhereverTheStreamIsCut) {
  wire::BaseCommand m;
  m.set_type(wire::BaseCommand::MESSAGE);
  m.mutable_message()->set_consumer_id(3);
  m.mutable_message()->mutable_message_id()->set_ledgerid(1);
  m.mutable_message()->mutable_message_id()->set_entryid(2);
  const std::string a = encode_command(flow_command(1, 5));
  const std::string b = encode_message(m, "meta", std::string(3000, 'p'));
  const std::string stream = a + b + a;
  for (std::size_t cut = 0; cut <= stream.size(); cut += 7) {
    FrameSplitter s;
    std::vector<std::string> got;
    int in_place = 0;
    FrameView view;
    auto feed = [&](std::string_view part) {
      ASSERT_TRUE(s.split(part, [&](std::string_view f, const StreamedPayload* streamed) {
                     EXPECT_EQ(streamed, nullptr);
                     in_place += f.data() >= part.data() && f.data() < part.data() + part.size();
                     EXPECT_TRUE(decode_frame_into(f, &view).ok());
                     got.emplace_back(f);
                     return true;
                   }).ok());
    };
    const std::string first = stream.substr(0, cut), second = stream.substr(cut);
    feed(first);
    feed(second);
    ASSERT_EQ(got.size(), 3u) << "cut at " << cut;
    EXPECT_EQ(got[0], a);
    EXPECT_EQ(got[1], b);
    EXPECT_EQ(got[2], a);
    EXPECT_EQ(s.buffered(), 0u);
    // Only the frame the cut falls in (if any) was copied.
    const bool on_boundary = cut == 0 || cut == a.size() || cut == a.size() + b.size() || cut == stream.size();
    EXPECT_EQ(in_place, on_boundary ? 3 : 2) << "cut at " << cut;
    ASSERT_TRUE(decode_frame_into(b, &view).ok());
    EXPECT_TRUE(view.has_payload);
    EXPECT_TRUE(view.checksum_ok);
    EXPECT_EQ(view.command.message().consumer_id(), 3u);
    EXPECT_EQ(std::string(view.metadata_and_payload), decode_frame(b)->metadata_and_payload);
  }
  // A size outside the bounds fails as next() does.
  FrameSplitter bad;
  const absl::Status st = bad.split(std::string("\xff\xff\xff\xff", 4),
                                    [](std::string_view, const StreamedPayload*) { return true; });
  EXPECT_NE(st.message().find("outside"), std::string::npos);
}

TEST(Crc32c, ExtendingIsTheChecksumOfTheConcatenation) {
  // StrCat, not operator+: GCC 12 warns falsely (-Warray-bounds) on a long string + literal.
  const std::string a = "consumer permits", b = absl::StrCat(std::string(1000, 'x'), "tail");
  EXPECT_EQ(crc32c_extend(crc32c(a), b), crc32c(absl::StrCat(a, b)));
  EXPECT_EQ(crc32c_extend(0, b), crc32c(b));
  EXPECT_EQ(crc32c_extend(crc32c(a), ""), crc32c(a));
}

// A large payload frame arriving in pieces streams: only its head is kept, the checksum is
// computed as the payload passes, and decoding the head gives what decoding the whole frame
// gives (command, metadata, checksum verdict), for a good and a corrupt checksum. Small frames
// and a frame whose head is malformed are split as before.
TEST(FrameSplitter, StreamedPayloadsAreChecksummedNotBuffered) {
  wire::BaseCommand m;
  m.set_type(wire::BaseCommand::MESSAGE);
  m.mutable_message()->set_consumer_id(4);
  m.mutable_message()->mutable_message_id()->set_ledgerid(1);
  m.mutable_message()->mutable_message_id()->set_entryid(9);
  wire::MessageMetadata meta;
  meta.set_producer_name("p");
  meta.set_sequence_id(1);
  meta.set_publish_time(2);
  meta.set_num_messages_in_batch(3);
  const std::string good = encode_message(m, meta.SerializeAsString(), std::string(40000, 'q'));
  const std::string bad = encode_message(m, meta.SerializeAsString(), std::string(30000, 'r'),
                                         /*corrupt_checksum=*/true);
  std::string garbled = good;
  garbled[8 + static_cast<unsigned char>(good[7])] = 0x0f;  // the magic's first byte
  const std::string small = encode_command(flow_command(1, 5));
  const std::string stream = small + good + small + bad + garbled + small;
  for (std::size_t piece : {1u, 7u, 1448u, 5000u}) {
    FrameSplitter s;
    s.stream_payloads_above(1024);
    std::vector<std::string> whole;
    std::vector<FrameView> decoded(6);
    std::vector<bool> was_streamed;
    std::vector<absl::Status> status;
    std::vector<int> batch;  // num_messages_in_batch, read while the head's view is valid
    std::size_t most_buffered = 0;
    for (std::size_t at = 0; at < stream.size(); at += piece) {
      ASSERT_TRUE(s.split(std::string_view(stream).substr(at, piece),
                          [&](std::string_view f, const StreamedPayload* streamed) {
                            const std::size_t i = was_streamed.size();
                            was_streamed.push_back(streamed != nullptr);
                            status.push_back(decode_frame_into(f, &decoded[i % 6], streamed));
                            absl::StatusOr<MetadataAndPayload> mp =
                                parse_metadata_and_payload(decoded[i % 6].metadata_and_payload);
                            batch.push_back(mp.ok() ? mp->metadata.num_messages_in_batch() : -1);
                            return true;
                          }).ok());
      most_buffered = std::max(most_buffered, s.buffered());
    }
    ASSERT_EQ(was_streamed.size(), 6u) << "pieces of " << piece;
    EXPECT_EQ(was_streamed, (std::vector<bool>{false, piece < good.size(), false, piece < bad.size(), false, false}))
        << "pieces of " << piece;
    EXPECT_TRUE(status[1].ok());
    EXPECT_TRUE(decoded[1].checksum_ok);
    EXPECT_EQ(decoded[1].command.message().message_id().entryid(), 9u);
    EXPECT_EQ(batch[1], 3);
    EXPECT_EQ(batch[3], 3);
    EXPECT_TRUE(status[3].ok());
    EXPECT_FALSE(decoded[3].checksum_ok);
    EXPECT_FALSE(status[4].ok());  // garbled: kept whole, refused by the decoder
    EXPECT_TRUE(status[5].ok());
    EXPECT_EQ(s.buffered(), 0u);
    // The garbled frame is buffered whole; the streamed ones never were.
    EXPECT_LE(most_buffered, garbled.size() + piece);
  }
}

TEST(FrameSplitter, ReassemblesFramesSplitAnywhere) {
  const std::string a = encode_command(flow_command(1, 5));
  const std::string b = encode_command(flow_command(2, 6));
  const std::string stream = a + b;
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    FrameSplitter s;
    s.append(stream.substr(0, cut));
    int frames = 0;
    auto drain = [&] {
      while (true) {
        absl::StatusOr<std::optional<std::string>> f = s.next();
        ASSERT_TRUE(f.ok());
        if (!f->has_value()) return;
        ASSERT_TRUE(decode_frame(**f).ok());
        ++frames;
      }
    };
    drain();
    s.append(stream.substr(cut));
    drain();
    EXPECT_EQ(frames, 2) << "cut at " << cut;
  }
}

// Arbitrary bytes never crash the decoder, and every answer is well formed: a decoded frame
// has a command type, a refusal is InvalidArgument, and the splitter hands out no more bytes
// than it was given.
RC_GTEST_PROP(FrameDecoder, ArbitraryBytesAreDecodedOrRefused, (const std::string& bytes)) {
  const absl::StatusOr<Frame> frame = decode_frame(bytes);
  if (frame.ok()) RC_ASSERT(frame->command.has_type());
  else RC_ASSERT(frame.status().code() == absl::StatusCode::kInvalidArgument);
  const absl::StatusOr<MetadataAndPayload> meta = parse_metadata_and_payload(bytes);
  if (!meta.ok()) RC_ASSERT(meta.status().code() == absl::StatusCode::kInvalidArgument);
  const BatchParse batch = parse_batch(bytes, 5);
  RC_ASSERT(batch.messages.size() <= 5u);
  if (batch.failed_at) RC_ASSERT(static_cast<std::size_t>(*batch.failed_at) == batch.messages.size());
  FrameSplitter s;
  s.append(bytes);
  std::size_t handed_out = 0;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<std::optional<std::string>> f = s.next();
    if (!f.ok()) {
      RC_ASSERT(f.status().code() == absl::StatusCode::kInvalidArgument);
      break;
    }
    if (!f->has_value()) break;
    handed_out += (*f)->size();
    RC_ASSERT(handed_out <= bytes.size());
    const absl::StatusOr<Frame> inner = decode_frame(**f);
    if (inner.ok()) RC_ASSERT(inner->command.has_type());
    else RC_ASSERT(inner.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

RC_GTEST_PROP(FrameDecoder, NeverCrashesOnMutatedValidFrames,
              (std::uint32_t permits, std::size_t at, std::uint8_t value)) {
  std::string bytes = encode_command(flow_command(9, permits));
  bytes[at % bytes.size()] = static_cast<char>(value);
  absl::StatusOr<Frame> f = decode_frame(bytes);
  if (f.ok()) RC_ASSERT(f->command.has_type());
}

}  // namespace
}  // namespace permitcheck::protocol
