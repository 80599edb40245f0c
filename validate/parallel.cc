#include "validate/parallel.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"

namespace permitcheck::validate {
namespace {

// validate_one(i), with any exception turned into the input's error.
FileResult guarded(const std::function<FileResult(std::size_t)>& validate_one, std::size_t i) {
  try {
    return validate_one(i);
  } catch (const std::bad_alloc&) {
    FileResult r;
    r.error = "out of memory (std::bad_alloc)";
    return r;
  } catch (const std::exception& e) {
    FileResult r;
    r.error = absl::StrCat("internal error: ", e.what());
    return r;
  }
}

}  // namespace

int default_jobs() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::vector<FileResult> validate_all(
    std::size_t count, int jobs, const std::function<FileResult(std::size_t)>& validate_one,
    const std::function<void(std::size_t, const FileResult&)>& done) {
  std::vector<FileResult> results(count);
  const std::size_t workers = std::min<std::size_t>(count, static_cast<std::size_t>(std::max(jobs, 1)));

  std::mutex mu;
  std::condition_variable finished_cv;
  std::vector<bool> finished(count, false);
  std::size_t next = 0;  // the next input a worker takes
  const auto work = [&] {
    while (true) {
      std::size_t i = 0;
      {
        std::lock_guard lock(mu);
        if (next == count) return;
        i = next++;
      }
      FileResult r = guarded(validate_one, i);
      {
        std::lock_guard lock(mu);
        results[i] = std::move(r);
        finished[i] = true;
      }
      finished_cv.notify_one();
    }
  };

  std::vector<std::thread> threads;
  if (workers > 1) {
    for (std::size_t w = 0; w < workers; ++w) {
      try {
        threads.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // fewer threads; with none, the calling thread does the work below
      }
    }
  }
  if (threads.empty()) {
    for (std::size_t i = 0; i < count; ++i) {
      results[i] = guarded(validate_one, i);
      done(i, results[i]);
    }
    return results;
  }
  for (std::size_t i = 0; i < count; ++i) {
    {
      std::unique_lock lock(mu);
      finished_cv.wait(lock, [&] { return finished[i]; });
    }
    done(i, results[i]);  // results[i] is no longer written: safe to read unlocked
  }
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace permitcheck::validate
