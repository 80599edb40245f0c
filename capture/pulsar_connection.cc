#include "capture/pulsar_connection.h"

#include "absl/strings/str_cat.h"

namespace permitcheck::capture {

FirstFrame classify_first_frame(std::string_view s) {
  if (s.size() < 4) return FirstFrame::kNeedMore;
  const std::uint32_t total = protocol::read_be32(s);
  if (total < 4 || total > protocol::kMaxFrameSize) return FirstFrame::kNotPulsar;
  if (s.size() < std::size_t{total} + 4) return FirstFrame::kNeedMore;
  const std::string_view frame = s.substr(0, std::size_t{total} + 4);
  // A command outside our subset (a producer's, say) is still a Pulsar command.
  const std::optional<std::uint64_t> type = protocol::peek_command_type(frame);
  if (type && *type > 0 && *type < 200 &&
      !wire::BaseCommand::Type_IsValid(static_cast<int>(*type))) {
    return FirstFrame::kOtherCommand;
  }
  absl::StatusOr<protocol::Frame> f = protocol::decode_frame(frame);
  if (!f.ok()) return FirstFrame::kNotPulsar;
  return f->command.type() == wire::BaseCommand::CONNECT ? FirstFrame::kConnect
                                                        : FirstFrame::kOtherCommand;
}

std::size_t PulsarConnection::buffered() const {
  return splitter_[0].buffered() + splitter_[1].buffered();
}

bool PulsarConnection::in_frame(Direction direction) const {
  const int d = static_cast<int>(direction);
  return !broken_[d] && !observer_.closed() && splitter_[d].in_frame();
}

std::optional<std::string> PulsarConnection::on_bytes(Direction direction, double time,
                                                      std::string_view bytes,
                                                      std::vector<TimedEvent>* out) {
  const int d = static_cast<int>(direction);
  if (broken_[d] || observer_.closed()) return std::nullopt;
  std::optional<std::string> why;
  const absl::Status split = splitter_[d].split(
      bytes, [&](std::string_view frame, const protocol::StreamedPayload* streamed) {
        wire::FrameFacts facts = observer_.on_frame(direction, time, frame, streamed, out);
        if (!facts.not_understood) return true;
        why = std::move(facts.not_understood);
        return false;
      });
  if (!split.ok()) {
    why = absl::StrCat(direction == Direction::kToServer ? "client" : "broker", " stream: ",
                       split.message());
  }
  if (why) broken_[d] = true;
  return why;
}

}  // namespace permitcheck::capture
