#include "properties/commands.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace permitcheck::properties {
namespace {

std::string shown(const StepCommand& c) { return show_step(c); }

struct Publish : StepCommand {
  std::vector<impl::EntrySpec> entries;
  explicit Publish(const ModelState& s) : entries(*gen_entries(s)) {}
  void apply(ModelState& s) const override { s.published += static_cast<std::int64_t>(entries.size()); }
  void run(const ModelState&, Harness& h) const override { h.publish(entries, shown(*this)); }
  void show(std::ostream& os) const override {
    os << "publish";
    for (std::size_t i = 0; i < entries.size(); ++i) {
      os << (i == 0 ? " " : " | ") << show_entry(entries[i]);
    }
  }
};

struct Step : StepCommand {
  std::uint64_t choice = *rc::gen::inRange<std::uint64_t>(0, 12);
  void run(const ModelState&, Harness& h) const override { h.step(choice, shown(*this)); }
  void show(std::ostream& os) const override { os << "run one task of pending queue #" << choice; }
};

struct RunAll : StepCommand {
  void run(const ModelState&, Harness& h) const override { h.run_all(shown(*this)); }
  void show(std::ostream& os) const override { os << "run every queue until idle"; }
};

struct Consume : StepCommand {
  int consumer;
  int n = *rc::gen::inRange(1, 5);
  explicit Consume(const ModelState& s) : consumer(*rc::gen::inRange(0, s.consumers)) {}
  void run(const ModelState&, Harness& h) const override { h.consume(consumer, n, shown(*this)); }
  void show(std::ostream& os) const override {
    os << "consumer " << consumer << " receives and acknowledges up to " << n;
  }
};

struct ReceiveAsync : StepCommand {
  int consumer;
  explicit ReceiveAsync(const ModelState& s) : consumer(*rc::gen::inRange(0, s.consumers)) {}
  void run(const ModelState&, Harness& h) const override { h.receive_async(consumer, shown(*this)); }
  void show(std::ostream& os) const override {
    os << "consumer " << consumer << " hands the next message to its listener";
  }
};

struct Redeliver : StepCommand {
  int consumer;
  explicit Redeliver(const ModelState& s) : consumer(*rc::gen::inRange(0, s.consumers)) {}
  void run(const ModelState&, Harness& h) const override { h.redeliver(consumer, shown(*this)); }
  void show(std::ostream& os) const override {
    os << "consumer " << consumer << " calls redeliverUnacknowledgedMessages";
  }
};

// Key_Shared with several consumers: the broker closes one consumer (its replacement subscribes
// last, so the keys move between the others) and another consumer redelivers what it holds:
// an entry pending at it is then owned by another consumer, and admission (the draining of a
// moved key) reads what the redelivery left in its pending set (B13).
struct RedeliverAfterClose : StepCommand {
  int closed;
  int consumer;
  // The closed consumer subscribed before the redelivering one (REQUIRES: consumers > 1): its
  // replacement subscribes after both, so the redelivering consumer's keys move.
  explicit RedeliverAfterClose(const ModelState& s)
      : closed(*rc::gen::inRange(0, s.consumers - 1)), consumer(*rc::gen::inRange(closed + 1, s.consumers)) {}
  void run(const ModelState&, Harness& h) const override {
    h.redeliver_after_close(closed, consumer, shown(*this));
  }
  void show(std::ostream& os) const override {
    os << "broker closes consumer " << closed << " at once, then consumer " << consumer
       << " calls redeliverUnacknowledgedMessages";
  }
};

struct CloseConsumer : StepCommand {
  int consumer;
  bool graceful = *weighted<bool>({{1, false}, {1, true}});
  explicit CloseConsumer(const ModelState& s) : consumer(*rc::gen::inRange(0, s.consumers)) {}
  void run(const ModelState&, Harness& h) const override {
    h.close_consumer(consumer, graceful, shown(*this));
  }
  void show(std::ostream& os) const override {
    os << "broker closes consumer " << consumer << (graceful ? " (closing, removed later)" : " at once");
  }
};

struct DropConnection : StepCommand {
  int slot;
  explicit DropConnection(const ModelState& s) : slot(*rc::gen::inRange(0, s.connections)) {}
  void run(const ModelState&, Harness& h) const override { h.drop_connection(slot, shown(*this)); }
  void show(std::ostream& os) const override { os << "pooled connection " << slot << " is lost"; }
};

struct FailNextSubscribe : StepCommand {
  void run(const ModelState&, Harness& h) const override { h.fail_next_subscribe(shown(*this)); }
  void show(std::ostream& os) const override { os << "broker refuses the next Subscribe"; }
};

struct CorruptField : StepCommand {
  // Out of range (0, 2^31, 2^32 - 1: C4, a protocol error) or in range but wrong (1, 7,
  // 2^31 - 1: C5, inconsistent data; the review finding F4 needs it) in every run.
  std::uint64_t value = *weighted<std::uint64_t>(
      {{2, 7}, {1, 0}, {1, 2147483648ULL}, {1, 4294967295ULL}, {1, 1}, {3, 2147483647ULL}});
  explicit CorruptField(const ModelState&) {}
  void run(const ModelState&, Harness& h) const override {
    h.corrupt_next_field(value, shown(*this));
  }
  void show(std::ostream& os) const override {
    os << "the next message_permits on the wire is rewritten to " << value;
  }
};

struct Quiesce : StepCommand {
  void run(const ModelState&, Harness& h) const override { h.quiesce(shown(*this)); }
  void show(std::ostream& os) const override {
    os << "quiesce: run everything, consume everything, check conservation";
  }
};

template <typename C>
rc::Gen<StepPtr> make(const ModelState& s) {
  if constexpr (std::is_constructible_v<C, const ModelState&>) {
    return rc::gen::exec([s]() -> StepPtr { return std::make_shared<const C>(s); });
  } else {
    return rc::gen::exec([]() -> StepPtr { return std::make_shared<const C>(); });
  }
}

}  // namespace

std::string show_step(const StepCommand& step) {
  std::ostringstream os;
  step.show(os);
  return os.str();
}

rc::Gen<StepPtr> gen_command(const ModelState& s) {
  std::vector<std::pair<std::size_t, rc::Gen<StepPtr>>> mix = {
      {4, make<RunAll>(s)},  // first: what a step shrinks towards
      {8, make<Publish>(s)},
      {8, make<Step>(s)},
      {6, make<Consume>(s)},
      {3, make<ReceiveAsync>(s)},
      {2, make<Redeliver>(s)},
      {3, make<CloseConsumer>(s)},
      {1, make<DropConnection>(s)},
      {1, make<FailNextSubscribe>(s)},
      {1, make<CorruptField>(s)},
      {1, make<Quiesce>(s)},
  };
  // A redelivery right after a membership change moved the keys (Key_Shared draining).
  if (s.sticky_key && s.consumers > 1) mix.push_back({4, make<RedeliverAfterClose>(s)});
  return weighted_one_of<StepPtr>(std::move(mix));
}

}  // namespace permitcheck::properties
