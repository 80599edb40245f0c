#include "validate/validate.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "trace/reader.h"

namespace permitcheck::validate {
namespace {

// The index of alternative T in spec::Event.
template <typename T, std::size_t I = 0>
constexpr std::size_t index_of() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, spec::Event>, T>) {
    return I;
  } else {
    return index_of<T, I + 1>();
  }
}

// The variant indexes of spec::Event that start each table of trace-format.md.
constexpr std::size_t kFirstClient = index_of<spec::IncOpen>();
constexpr std::size_t kFirstBroker = index_of<spec::Send>();
constexpr std::size_t kExtension = index_of<spec::Extension>();

void count(const spec::Event& event, EventFamilies* f) {
  const std::size_t i = event.index();
  if (i == kExtension) {
    ++f->extension;
  } else if (i >= kFirstBroker) {
    ++f->broker;
  } else if (i >= kFirstClient) {
    ++f->client;
  } else {
    ++f->wire;
    if (std::holds_alternative<spec::Quiescent>(event)) ++f->quiescent;
    if (const auto* m = std::get_if<spec::Message>(&event); m && m->batch_size) {
      ++f->sized_messages;
    }
  }
}

// Events read ahead by the reading thread, handed to the checking thread in order.
struct Block {
  // REQUIRES: capacity >= 1.
  explicit Block(std::size_t capacity) : events(capacity), lines(capacity) {}

  std::vector<spec::Event> events;  // reused from block to block: no allocation per event
  std::vector<std::uint64_t> lines;
  std::size_t size = 0;
  bool last = false;                 // the trace ends after this block
  std::optional<std::string> error;  // ... with this error
};

// Fills `block` from `reader`: up to its capacity, or to the end or the first error.
void fill(trace::TraceReader& reader, Block* block) {
  block->size = 0;
  block->last = false;
  block->error.reset();
  while (block->size < block->events.size()) {
    absl::StatusOr<bool> more =
        reader.next(&block->events[block->size], &block->lines[block->size]);
    if (!more.ok()) {
      block->last = true;
      block->error = std::string(more.status().message());
      return;
    }
    if (!*more) {
      block->last = true;
      return;
    }
    ++block->size;
  }
}

// Two blocks in flight between one reading and one checking thread: memory stays constant.
class BlockPipe {
 public:
  // REQUIRES: block_events >= 1.
  explicit BlockPipe(std::size_t block_events)
      : blocks_{Block(block_events), Block(block_events)} {}

  // Reading thread: reads the whole trace into blocks, in turn, up to the last one.
  void produce(trace::TraceReader& reader) {
    for (std::size_t i = 0;; i = (i + 1) % blocks_.size()) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !full_[i]; });
      }
      fill(reader, &blocks_[i]);
      const bool last = blocks_[i].last;
      {
        std::lock_guard lock(mu_);
        full_[i] = true;
      }
      cv_.notify_all();
      if (last) return;
    }
  }

  // Checking thread: block number i (0, 1, 2, ...), once it is filled; the last says so.
  Block* take(std::size_t i) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return full_[i % blocks_.size()]; });
    return &blocks_[i % blocks_.size()];
  }
  void give_back(std::size_t i) {
    {
      std::lock_guard lock(mu_);
      full_[i % blocks_.size()] = false;
    }
    cv_.notify_all();
  }
 private:
  std::array<Block, 2> blocks_;
  std::array<bool, 2> full_{};
  std::mutex mu_;
  std::condition_variable cv_;
};

// Checks and counts the events of one block; the last block also gives the trace's error.
// Returns whether it was the last.
bool check(const Block& block, const ValidateOptions& options, spec::Monitor* monitor,
           FileResult* result) {
  for (std::size_t k = 0; k < block.size; ++k) {
    count(block.events[k], &result->families);
    monitor->on_event(block.events[k], block.lines[k]);
    result->last_line = block.lines[k];
    ++result->events;
    if (options.progress && options.progress_every > 0 &&
        result->events % options.progress_every == 0) {
      options.progress(result->events, block.lines[k]);
    }
  }
  if (block.last) result->error = block.error;
  return block.last;
}

// Reads on a second thread while this one checks, two blocks in flight. False (nothing read)
// when no thread can be started.
bool check_overlapped(trace::TraceReader& reader, const ValidateOptions& options,
                      spec::Monitor* monitor, FileResult* result) {
  auto pipe = std::make_unique<BlockPipe>(std::max<std::size_t>(options.block_events, 1));
  std::thread reading;
  try {
    reading = std::thread([&] { pipe->produce(reader); });
  } catch (const std::system_error&) {
    return false;
  }
  for (std::size_t i = 0;; ++i) {
    const bool last = check(*pipe->take(i), options, monitor, result);
    pipe->give_back(i);
    if (last) break;
  }
  reading.join();  // it returned after filling the last block
  return true;
}

}  // namespace

std::string FileResult::display_name() const { return name == "-" ? "<stdin>" : name; }

FileResult validate_stream(std::istream& in, const std::string& name,
                           const ValidateOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  FileResult result;
  result.name = name;
  trace::ReaderOptions reader_options;
  reader_options.max_line_bytes = options.max_line_bytes > 0 ? options.max_line_bytes : 1;
  absl::StatusOr<trace::TraceReader> reader = trace::TraceReader::open(in, reader_options);
  if (!reader.ok()) {
    result.error = std::string(reader.status().message());
    return result;
  }
  spec::TraceHeader header = reader->header();
  if (options.ruleset) header.ruleset = *options.ruleset;
  result.header = header;
  result.last_line = reader->header_line();

  // The ledger is not retained: a finished command's state is released (constant memory).
  spec::Monitor monitor(header, spec::MonitorOptions{.retain_ledger = false});
  if (options.threads < 2 || !check_overlapped(*reader, options, &monitor, &result)) {
    Block block(1);  // one event at a time: nothing is held beyond the event being checked
    do {
      fill(*reader, &block);
    } while (!check(block, options, &monitor, &result));
  }
  if (!result.error) monitor.finish();
  result.violations = monitor.violations();
  result.deviations = monitor.deviations();
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

FileResult validate_path(const std::string& path, std::istream& stdin_stream,
                         const ValidateOptions& options) {
  if (path == "-") return validate_stream(stdin_stream, path, options);
  // The reader pulls 128 KiB chunks, larger than the stream's own buffer: they are read
  // straight into the reader's memory, without a copy.
  std::ifstream file(path, std::ios::binary);
  if (!file.is_open()) {
    FileResult result;
    result.name = path;
    result.error = absl::StrCat("cannot open: ", std::strerror(errno));
    return result;
  }
  return validate_stream(file, path, options);
}

std::vector<AppliedRules> applied_rules(const EventFamilies& f, const spec::TraceHeader& header) {
  std::vector<AppliedRules> out;
  if (f.wire > 0) {
    std::string rules = "W2, N4 (no Flow before subscribe_ok), over-grant bound (sum Flow - sum P <= Q";
    if (!header.q) rules += ", Q from the first Flow after subscribe_ok";
    rules += ")";
    if (f.sized_messages > 0) {
      absl::StrAppend(&rules, ", B2/B7 (", f.sized_messages, " messages with batch_size)");
    } else {
      rules += "; B2/B7 not checked (no batch_size)";
    }
    if (f.quiescent > 0) {
      absl::StrAppend(&rules, ", E5/E6 at ", f.quiescent, " quiescent point",
                      f.quiescent == 1 ? "" : "s",
                      header.t ? "" : " (no t: only 0 < available <= Q)");
    } else {
      rules += "; E5/E6 not checked (no quiescent event)";
    }
    out.push_back({"wire", std::move(rules)});
  }
  if (f.client > 0) {
    out.push_back({"client accounting",
                   "C1-C7, K1-K8, S1-S7, M1-M3, N1-N7, E1-E3 (exact, per command and per "
                   "incarnation)"});
  }
  if (f.broker > 0) out.push_back({"broker accounting", "B1-B9, E4"});
  return out;
}

int validate_exit_code(const std::vector<FileResult>& results) {
  int code = kExitPass;
  for (const FileResult& r : results) {
    if (r.error) return kExitBadInput;
    if (!r.violations.empty()) code = kExitViolation;
  }
  return code;
}

}  // namespace permitcheck::validate
