// `permitcheck validate --jobs N` of many inputs (validate/parallel.h): traces and captures
// validated at once on several threads give the same report (text, JSON, JUnit), the same
// messages on stderr and the same exit code whatever the number of jobs, each input in its
// command-line order — with a passing, a failing, an incomplete and a malformed input among
// them, so that the combined exit code (spec/outcome.h `combine`) is exercised too.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/capture/capture_testing.h"

namespace permitcheck::capture {
namespace many_inputs {

#ifdef PERMITCHECK_BIN
using testing::Conversation;
using testing::LinkKind;
using testing::Packet;
namespace frames = testing::frames;

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// `dir`: the calling test's own folder, so that tests run side by side never share the files
// the report is written to.
Outcome validate(const std::string& dir, const std::string& args) {
  const std::string out = dir + "/out.txt";
  const std::string err = dir + "/err.txt";
  const int rc = std::system((std::string(PERMITCHECK_BIN) + " validate --no-progress " + args +
                              " >" + out + " 2>" + err)
                                 .c_str());
  return Outcome{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(out), slurp(err)};
}

// One consumer: Flow 10, five entries acknowledged, then the Flow returning 5 (correct) or
// nothing (E5 at the quiet close); `lose_success`: the broker's subscribe success is lost
// (the client's ack shows it), so the connection is not followed: INCOMPLETE.
std::string capture(bool correct, bool lose_success = false) {
  Conversation c(testing::endpoint4(1, 40000), testing::endpoint4(2, 6650));
  c.handshake();
  c.client_sends(frames::connect());
  c.server_sends(frames::connected());
  c.client_sends(frames::subscribe(0, 1));
  const std::size_t success_at = c.packets().size();
  c.server_sends(frames::success(1));
  c.client_sends(frames::flow(0, 10));
  std::string messages, acks;
  for (std::uint64_t e = 1; e <= 5; ++e) {
    messages += frames::message(0, e, 1, {}, 1);
    acks += frames::ack(0, e);
  }
  c.server_sends(messages);
  c.client_sends(acks);
  if (correct) c.client_sends(frames::flow(0, 5));
  c.pause(1.5);
  c.client_fin();
  std::vector<Packet> packets = c.packets();
  if (lose_success) packets.erase(packets.begin() + static_cast<long>(success_at));
  return testing::pcap_bytes(LinkKind::kEthernet, packets);
}

class ManyInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test process: ctest runs this suite's tests side by side, and one
    // rewriting a file another is reading gave a truncated input.
    dir_ = ::testing::TempDir() + "/many-inputs-" + std::to_string(::getpid()) +
                            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const std::string& dir = dir_;
    std::system(("mkdir -p " + dir).c_str());
    const std::string golden = std::string(PERMITCHECK_SOURCE_DIR) + "/tests/cli/golden/";
    const auto file = [&](const std::string& name, const std::string& bytes) {
      testing::write_file(dir + "/" + name, bytes);
      return dir + "/" + name;
    };
    pass_ = {golden + "format_example.jsonl", file("good.pcap", capture(true)),
             golden + "L10.jsonl"};
    inputs_ = {
        golden + "format_example.jsonl",
        file("good.pcap", capture(true)),
        golden + "over_return.jsonl",  // E2: a violation
        file("bad.pcap", capture(false)),  // E5: a violation
        file("lost.pcap", capture(true, /*lose_success=*/true)),  // INCOMPLETE
        file("malformed.jsonl",
             "{\"trace\":\"pip491-permits\",\"version\":1,\"source\":\"client\"}\n"
             "{\"ev\":\"inc_open\",\"inc\":1,\"cnx\":\"c1\",\"consumer\":0}\n"
             "{\"ev\":\"recv\",\"inc\":1,\"cmd\":1,\"message_permits\":1.5}\n"),
        file("garbage.pcap", std::string("\xa1\xb2\xc3\xd4", 4) + std::string(100, 'x')),
        golden + "L1.jsonl",  // a violation
        golden + "L10.jsonl",
    };
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += " " + x;
    return s;
  }

  Outcome validate(const std::string& args) const { return many_inputs::validate(dir_, args); }

  std::string dir_;
  std::vector<std::string> inputs_;
  std::vector<std::string> pass_;
};

TEST_F(ManyInputs, SameReportMessagesAndExitCodeWhateverTheJobCount) {
  for (const std::string format : {"text", "json", "junit"}) {
    const Outcome one = validate("--jobs 1 --format " + format + join(inputs_));
    EXPECT_EQ(one.code, 2) << one.err;  // a malformed input: bad input wins
    for (int jobs : {2, 3, 16}) {
      const Outcome many = validate("--jobs " + std::to_string(jobs) + " --format " + format +
                                join(inputs_));
      EXPECT_EQ(many.code, one.code) << jobs << " jobs, " << format;
      EXPECT_EQ(many.out, one.out) << jobs << " jobs, " << format;
      EXPECT_EQ(many.err, one.err) << jobs << " jobs, " << format;
    }
    // Every input is in the report, in the command line's order.
    std::size_t at = 0;
    for (const std::string& input : inputs_) {
      const std::size_t found = one.out.find(input, at);
      EXPECT_NE(found, std::string::npos) << format << ": " << input << " missing or out of order";
      if (found != std::string::npos) at = found;
    }
  }
  // The default (--jobs: the number of cores) reads the same.
  EXPECT_EQ(validate("--format json" + join(inputs_)).out,
            validate("--jobs 1 --format json" + join(inputs_)).out);
}

TEST_F(ManyInputs, ExitCodeCombinesTheInputsWhateverTheJobCount) {
  for (int jobs : {1, 4}) {
    const std::string j = " --jobs " + std::to_string(jobs);
    EXPECT_EQ(validate(j + join(pass_)).code, 0);
    // A violation beside an INCOMPLETE input: FAIL (1) wins; INCOMPLETE beside passes: 3.
    EXPECT_EQ(validate(j + join(pass_) + " " + inputs_[4] + " " + inputs_[2]).code, 1);
    EXPECT_EQ(validate(j + join(pass_) + " " + inputs_[4]).code, 3);
    // A malformed input anywhere: 2, naming it and its line.
    const Outcome bad = validate(j + " " + inputs_[5] + join(pass_));
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find(inputs_[5] + ": line 3: "), std::string::npos) << bad.err;
  }
}
// An unreadable input first (a path that does not exist, then a folder), then a violation and
// an INCOMPLETE capture: bad input (2) wins over both, whatever the job count, and the
// unreadable input is named; the inputs after it are still validated and reported.
TEST_F(ManyInputs, AnUnreadableFirstInputMakesExit2OverAViolationAndAnIncomplete) {
  for (const std::string unreadable : {dir_ + "/no-such.pcap", dir_}) {
    for (int jobs : {1, 4}) {
      const Outcome o = validate("--jobs " + std::to_string(jobs) + " " + unreadable + " " +
                                 inputs_[4] + " " + inputs_[2]);
      EXPECT_EQ(o.code, 2) << unreadable << " " << jobs << o.err;
      EXPECT_NE(o.err.find(unreadable), std::string::npos) << o.err;
      EXPECT_NE(o.out.find(inputs_[4]), std::string::npos) << o.out;
      EXPECT_NE(o.out.find(inputs_[2]), std::string::npos) << o.out;
    }
  }
  // Alone, the same violation and INCOMPLETE give 1: the unreadable input made the 2.
  EXPECT_EQ(validate(inputs_[4] + " " + inputs_[2]).code, 1);
}
#endif  // PERMITCHECK_BIN

}  // namespace many_inputs
}  // namespace permitcheck::capture
