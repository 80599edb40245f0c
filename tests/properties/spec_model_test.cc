// The SpecModel's own checks, each fed a known-bad trace: B12's aggregate judged at the first
// send of a dispatch round, and C7 (the failures a command records are the specification's).
#include "properties/spec_model.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "impl/world.h"

namespace permitcheck::properties {
namespace {

using spec::Id;

int mismatches(SpecModel& model, const impl::World& world, spec::RuleId rule) {
  std::vector<ModelMismatch> out;
  model.compare(world, &out);
  return static_cast<int>(std::count_if(out.begin(), out.end(), [&](const ModelMismatch& m) { return m.rule == rule; }));
}

spec::Send send_to(const char* inc, std::uint64_t consumer, std::uint64_t cmd, std::int64_t b) {
  spec::SentEntry e{.cmd = Id::number(cmd), .p = b};
  e.entry.batch_size = b;
  return spec::Send{.consumer = consumer,
                    .inc = Id::text(inc),
                    .dispatcher = spec::DispatcherKind::kPersistentKeyShared,
                    .entries = {e},
                    .consumer_debit = b,
                    .dispatcher_debit = b};
}

impl::WorldConfig key_shared() {
  impl::WorldConfig c;
  c.dispatcher = spec::DispatcherKind::kPersistentKeyShared;
  c.consumers = 2;
  c.q = 4;
  return c;
}

// b2 (1 permit) overdraws to -4 on a batch of 5 (B9), leaving the aggregate at 4 - 4 = 0. A
// new round that starts with a send to b1 (4 permits of its own) starts at aggregate 0: B12.
// Within the round that overdrew, the same send is no B12 finding (a read serves several
// consumers in turn).
TEST(SpecModelB12, B12_ARoundStartingAtAggregateZeroIsReported) {
  const impl::WorldConfig config = key_shared();
  const impl::World world(config);
  for (const bool new_round : {true, false}) {
    SCOPED_TRACE(new_round ? "new round" : "same round");
    SpecModel model(spec::RulesetId::kRevD, config);
    model.consumer_added("b1", 0);
    model.consumer_added("b2", 1);
    model.flow_applied("b1", 4);
    model.flow_applied("b2", 1);
    model.on_event(send_to("b2", 1, 1, 5), world);
    if (new_round) model.on_event(spec::Message{.cnx = Id::text("c1"), .consumer = 1, .cmd = Id::number(1)}, world);
    model.on_event(send_to("b1", 0, 2, 1), world);
    EXPECT_EQ(mismatches(model, world, spec::RuleId::kB12), new_round ? 1 : 0);
  }
}

// A checksum failure records `corrupt` at stage checksum (C7); the same run with that event
// left out, or at another stage, disagrees with the specification's run.
TEST(SpecModelC7, C7_ACommandRecordingOtherFailuresThanTheSpecificationIsReported) {
  impl::WorldConfig config;
  config.q = 4;
  impl::World world(config);
  world.start();
  impl::EntrySpec entry;
  entry.payload.checksum_ok = false;
  world.publish({entry});
  world.run_all();
  const std::vector<spec::Event>& events = world.events();
  ASSERT_EQ(std::count_if(events.begin(), events.end(),
                          [](const spec::Event& e) { return std::holds_alternative<spec::Corrupt>(e); }),
            1);
  enum class Doctor { kNone, kDropCorrupt, kOtherStage };
  for (const Doctor doctor : {Doctor::kNone, Doctor::kDropCorrupt, Doctor::kOtherStage}) {
    SCOPED_TRACE(static_cast<int>(doctor));
    SpecModel model(spec::RulesetId::kRevD, config);
    for (const spec::Event& e : events) {
      if (const auto* c = std::get_if<spec::Corrupt>(&e)) {
        if (doctor == Doctor::kDropCorrupt) continue;
        if (doctor == Doctor::kOtherStage) {
          spec::Corrupt other = *c;
          other.stage = spec::FailureStage::kMetadata;
          model.on_event(other, world);
          continue;
        }
      }
      model.on_event(e, world);
    }
    EXPECT_EQ(mismatches(model, world, spec::RuleId::kC7), doctor == Doctor::kNone ? 0 : 1);
  }
}

}  // namespace
}  // namespace permitcheck::properties
