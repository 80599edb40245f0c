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
#include <new>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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
    if (std::holds_alternative<spec::Send>(event)) ++f->consumers;
  } else if (i >= kFirstClient) {
    ++f->client;
    if (std::holds_alternative<spec::IncOpen>(event)) ++f->consumers;
  } else {
    ++f->wire;
    if (std::holds_alternative<spec::Quiescent>(event)) ++f->quiescent;
    if (std::holds_alternative<spec::Subscribe>(event) ||
        std::holds_alternative<spec::SubscribeOk>(event)) {
      ++f->consumers;
    }
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

// Events read ahead on one thread.
constexpr std::size_t kOneThreadBlock = 64;

// The memory limit is checked this often (MonitorSize walks the wire consumers and connections).
constexpr std::uint64_t kMemoryCheckEvery = 1024;

// "line N: memory limit of 1.0 GiB (--max-memory) reached: ..., most in commands in flight".
std::string memory_exceeded(const spec::MonitorSize& size, std::size_t limit,
                            std::uint64_t line) {
  return absl::StrCat(
      "line ", line, ": memory limit of ", format_bytes(limit),
      " (--max-memory) reached: the monitor holds about ", format_bytes(size.bytes),
      ", most of it in ", std::string(size.largest()), " (", size.commands, " commands in flight, ",
      size.finished_commands, " finished commands, ", size.messages, " messages, ",
      size.incarnations, " incarnations, ", size.wire_consumers, " wire consumers, ",
      size.connections, " connections, ", size.findings,
      " findings); raise --max-memory if the trace really keeps that much in flight");
}

std::string out_of_memory(std::uint64_t line) {
  return absl::StrCat("line ", line, ": out of memory (std::bad_alloc) before the --max-memory "
                      "limit was reached; lower --max-memory or give the process more memory");
}

// Checks and counts the events of one block; the last block also gives the trace's error.
// Returns whether checking stops: the last block, or the memory limit reached.
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
    if (options.max_memory > 0 && result->events % kMemoryCheckEvery == 0) {
      const spec::MonitorSize size = monitor->size();
      if (size.bytes > options.max_memory) {
        result->error = memory_exceeded(size, options.max_memory, block.lines[k]);
        return true;
      }
    }
  }
  if (block.last) result->error = block.error;
  return block.last;
}

// Fills `block`; std::bad_alloc while reading ends the trace with an error.
void fill_guarded(trace::TraceReader& reader, Block* block) {
  try {
    fill(reader, block);
  } catch (const std::bad_alloc&) {
    const std::uint64_t line = block->size > 0 ? block->lines[block->size - 1] + 1 : 0;
    block->last = true;
    block->error = line > 0 ? out_of_memory(line)
                            : std::string("out of memory (std::bad_alloc) while reading");
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
      fill_guarded(reader, &blocks_[i]);
      bool last = false;
      {
        std::lock_guard lock(mu_);
        if (stopped_) blocks_[i].last = true;  // the checking thread stopped early
        last = blocks_[i].last;
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
  // Checking thread, stopping before the last block: the reading thread's next block is its
  // last; blocks i+1, ... are taken and given back until it (then the thread can be joined).
  void stop_after(std::size_t i) {
    {
      std::lock_guard lock(mu_);
      stopped_ = true;
    }
    for (std::size_t j = i + 1;; ++j) {
      const bool last = take(j)->last;
      give_back(j);
      if (last) return;
    }
  }

 private:
  std::array<Block, 2> blocks_;
  std::array<bool, 2> full_{};
  bool stopped_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
};

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
  bool out_of_memory = false;
  for (std::size_t i = 0;; ++i) {
    Block* block = pipe->take(i);
    bool stop = true;
    try {
      stop = check(*block, options, monitor, result);
    } catch (const std::bad_alloc&) {
      out_of_memory = true;  // rethrown once the reading thread has stopped
    }
    const bool last = block->last;
    pipe->give_back(i);
    if (stop) {
      if (!last) pipe->stop_after(i);
      break;
    }
  }
  reading.join();  // it returned after filling the last block
  if (out_of_memory) throw std::bad_alloc();
  return true;
}

}  // namespace

std::string format_bytes(std::size_t bytes) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  constexpr std::size_t kGiB = std::size_t{1} << 30;
  if (bytes >= kGiB) return absl::StrFormat("%.1f GiB", static_cast<double>(bytes) / kGiB);
  if (bytes >= kMiB) return absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / kMiB);
  if (bytes >= 1024) return absl::StrFormat("%.1f KiB", static_cast<double>(bytes) / 1024);
  return absl::StrCat(bytes, " bytes");
}

std::optional<std::size_t> parse_memory_limit(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::string digits = text;
  std::uint64_t unit = 1;
  switch (text.back()) {
    case 'K': case 'k': unit = std::uint64_t{1} << 10; digits.pop_back(); break;
    case 'M': case 'm': unit = std::uint64_t{1} << 20; digits.pop_back(); break;
    case 'G': case 'g': unit = std::uint64_t{1} << 30; digits.pop_back(); break;
    default: break;
  }
  if (digits.empty() || digits.size() > 13 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const std::uint64_t n = std::stoull(digits);  // at most 13 digits: no overflow
  constexpr std::uint64_t kMax = std::uint64_t{1} << 40;
  if (n == 0 || n > kMax / unit) return std::nullopt;
  return static_cast<std::size_t>(n * unit);
}

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

  std::unique_ptr<spec::Monitor> monitor;
  try {
    // The ledger is not retained: a finished command's state is released (constant memory).
    monitor = std::make_unique<spec::Monitor>(header,
                                              spec::MonitorOptions{.retain_ledger = false});
    if (options.threads < 2 || !check_overlapped(*reader, options, monitor.get(), &result)) {
      // A few events at a time (read, then checked): the same result as one at a time, with
      // fewer calls between the two.
      Block block(kOneThreadBlock);
      do {
        fill_guarded(*reader, &block);
      } while (!check(block, options, monitor.get(), &result));
    }
    if (!result.error) monitor->finish();
    result.violations = monitor->violations();
    result.deviations = monitor->deviations();
  } catch (const std::bad_alloc&) {
    // A hash table that failed to grow cannot be destroyed safely (Abseil's resize records
    // the new capacity before it allocates), so the monitor is abandoned, not destroyed: the
    // caller reports the error and exits. Its findings so far are not kept either.
    static_cast<void>(monitor.release());
    result.violations.clear();
    result.deviations.clear();
    result.error = out_of_memory(result.last_line + 1);
  }
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
  spec::Outcome outcome = spec::Outcome::kNotApplicable;
  for (const FileResult& r : results) {
    if (r.error || r.nothing_checked()) return spec::kExitBadInput;
    outcome = spec::combine(outcome, r.outcome());
  }
  return results.empty() ? spec::kExitBadInput : spec::exit_code(outcome);
}

}  // namespace permitcheck::validate
