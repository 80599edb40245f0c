#include "cli/explain.h"

#include <map>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/absl_view.h"
#include "spec/plain_text.h"
#include "spec/rule_id.h"
#include "trace/writer.h"

namespace permitcheck::cli {
namespace {

std::string units(std::int64_t n) { return spec::count_noun(n, "permit"); }

// What the events say about one command, beyond the monitor's ledger.
struct Story {
  spec::Id cmd;
  std::optional<std::int64_t> b;
  std::optional<spec::FailureStage> failure;
  std::optional<std::int64_t> failure_index;
  std::optional<spec::TransferPath> path;
  std::int64_t claims = 0;
  std::int64_t restores = 0;
  std::map<std::string, std::int64_t> skips;  // reason -> count
  std::int64_t direct = 0;
  std::vector<std::string> direct_paths;
  std::int64_t settled = 0;
  std::int64_t msg_returns = 0;
  std::int64_t drops = 0;
  bool client_seen = false;  // a client accounting event named it
};

class Collector {
 public:
  Story& story(const spec::Id& cmd) {
    auto [it, inserted] = index_.try_emplace(cmd, stories_.size());
    if (inserted) {
      stories_.emplace_back();
      stories_.back().cmd = cmd;
    }
    return stories_[it->second];
  }
  Story* find(const spec::Id& cmd) {
    auto it = index_.find(cmd);
    return it == index_.end() ? nullptr : &stories_[it->second];
  }

  void on(const spec::Event& event) {
    std::visit([&](const auto& e) { handle(e); }, event);
    // Client accounting events name their command directly (claim, settle, ...).
    std::visit([&](const auto& e) {
      if constexpr (requires { e.cmd; } && !std::is_same_v<std::decay_t<decltype(e)>, spec::Message> &&
                    !std::is_same_v<std::decay_t<decltype(e)>, spec::Ack>) {
        if constexpr (std::is_same_v<std::decay_t<decltype(e.cmd)>, spec::Id>) {
          if (Story* s = find(e.cmd)) s->client_seen = true;
        }
      }
    }, event);
  }

  std::vector<Story>& stories() { return stories_; }

 private:
  void handle(const spec::Message& e) {
    Story& s = story(e.cmd);
    if (e.batch_size) s.b = e.batch_size;
  }
  void handle(const spec::Recv& e) { story(e.cmd); }
  void handle(const spec::Metadata& e) { story(e.cmd).b = e.batch_size; }
  void handle(const spec::Corrupt& e) {
    Story& s = story(e.cmd);
    if (!s.failure) {
      s.failure = e.stage;
      s.failure_index = e.index;
    }
  }
  void handle(const spec::Claim& e) {
    ++story(e.cmd).claims;
    msg_cmd_.insert_or_assign(e.msg, e.cmd);
  }
  void handle(const spec::Restore& e) { ++story(e.cmd).restores; }
  void handle(const spec::Skip& e) { ++story(e.cmd).skips[std::string(spec::skip_reason_name(e.reason))]; }
  void handle(const spec::Transfer& e) { story(e.cmd).path = e.path; }
  void handle(const spec::DirectReturn& e) {
    Story& s = story(e.cmd);
    s.direct += e.n;
    if (e.path) s.direct_paths.emplace_back(e.path->name());
  }
  void handle(const spec::Settle& e) { story(e.cmd).settled += e.n; }
  void handle(const spec::MsgReturn& e) {
    auto it = msg_cmd_.find(e.msg);
    if (it != msg_cmd_.end()) story(it->second).msg_returns += e.n;
  }
  void handle(const spec::Drop& e) {
    std::optional<spec::Id> cmd = e.cmd;
    if (!cmd && e.msg) {
      auto it = msg_cmd_.find(*e.msg);
      if (it != msg_cmd_.end()) cmd = it->second;
    }
    if (cmd) story(*cmd).drops += e.n;
  }
  void handle(const spec::Send& e) {
    for (const spec::SentEntry& entry : e.entries) {
      if (!entry.entry.admitted) continue;
      Story& s = story(entry.cmd);
      s.b = entry.entry.batch_size;
    }
  }
  template <typename T>
  void handle(const T&) {}

  std::vector<Story> stories_;
  absl::flat_hash_map<spec::Id, std::size_t> index_;
  absl::flat_hash_map<spec::Id, spec::Id> msg_cmd_;
};

std::string tell(const Story& s, const std::optional<spec::CommandLedger>& ledger) {
  std::string out = absl::StrCat("command ", s.cmd.to_string());
  const bool has_p = ledger && ledger->p.has_value();
  const std::int64_t debited = has_p ? *ledger->p : 0;
  const std::int64_t* p = has_p ? &debited : nullptr;
  if (p) {
    absl::StrAppend(&out, " debited P=", *p);
  } else {
    out += " (P unknown)";
  }
  if (s.b) absl::StrAppend(&out, " (B=", *s.b, ")");
  if (!s.client_seen) return out + "; the trace has no client accounting events for it.";
  if (s.claims > 0) {
    absl::StrAppend(&out, "; ", s.claims, s.claims == 1 ? " message was" : " messages were",
                    " handed off");
    if (s.restores > 0) absl::StrAppend(&out, " (", s.restores, " restored after a failed hand-off)");
  }
  for (const auto& [reason, n] : s.skips) {
    absl::StrAppend(&out, "; ", n, n == 1 ? " index was" : " indexes were", " skipped (", reason, ")");
  }
  if (s.path) absl::StrAppend(&out, "; ownership moved to the ", to_absl(spec::transfer_path_name(*s.path)), " path");
  const std::int64_t returned = ledger ? ledger->returned : s.direct + s.settled + s.msg_returns;
  absl::StrAppend(&out, "; the client returned ", returned);
  if (s.failure) {
    absl::StrAppend(&out, " after a ", to_absl(spec::failure_stage_name(*s.failure)), " failure");
    if (s.failure_index) absl::StrAppend(&out, " at index ", *s.failure_index);
  }
  std::vector<std::string> parts;
  if (s.direct > 0) {
    parts.push_back(absl::StrCat(s.direct, " directly",
                                 s.direct_paths.empty() ? "" : absl::StrCat(" (", absl::StrJoin(s.direct_paths, ", "), ")")));
  }
  if (s.settled > 0) parts.push_back(absl::StrCat(s.settled, " at its terminal transition"));
  if (s.msg_returns > 0) parts.push_back(absl::StrCat(s.msg_returns, " from its messages"));
  if (parts.size() > 1 || (!parts.empty() && s.direct > 0)) {
    absl::StrAppend(&out, " (", absl::StrJoin(parts, ", "), ")");
  }
  const std::int64_t dropped = ledger ? ledger->dropped : s.drops;
  if (dropped > 0) absl::StrAppend(&out, "; ", units(dropped), " dropped because the incarnation had ended");
  if (p) {
    const std::int64_t accounted = returned + dropped;
    const bool settled = ledger && ledger->settled;
    if (returned > *p) {
      absl::StrAppend(&out, "; ", units(returned - *p), returned - *p == 1 ? " is" : " are",
                      " over-granted");
    } else if (accounted < *p && settled) {
      absl::StrAppend(&out, "; ", units(*p - accounted), *p - accounted == 1 ? " is" : " are",
                      " lost");
    } else if (accounted < *p) {
      absl::StrAppend(&out, "; ", units(*p - accounted), " still outstanding (no terminal transition yet)");
    } else if (dropped == 0) {
      out += "; exact";
    }
  }
  return out + ".";
}

std::string tell_send(const spec::Send& e, std::uint64_t line) {
  std::string out = absl::StrCat("send on line ", line, " to consumer ", e.consumer);
  if (e.dispatcher) absl::StrAppend(&out, " (", to_absl(spec::dispatcher_name(*e.dispatcher)), ")");
  std::vector<std::string> entries;
  std::int64_t sum = 0;
  for (const spec::SentEntry& s : e.entries) {
    std::string one = absl::StrCat("command ", s.cmd.to_string(), " B=", s.entry.batch_size);
    if (!s.entry.ack_set.absent()) {
      absl::StrAppend(&one, " ", spec::acknowledged_text(s.entry.ack_set, s.entry.batch_size));
    }
    if (!s.entry.admitted) {
      one += " rejected";
    } else if (s.p) {
      absl::StrAppend(&one, " admitted with P=", *s.p);
      sum += *s.p;
    } else {
      one += " admitted";
    }
    entries.push_back(std::move(one));
  }
  absl::StrAppend(&out, ": ", absl::StrJoin(entries, ", "), "; finalized sum of P = ", sum,
                  "; consumer debited ", e.consumer_debit);
  if (e.dispatcher_debit) absl::StrAppend(&out, ", dispatcher aggregate debited ", *e.dispatcher_debit);
  if (e.consumer_debit != sum) {
    absl::StrAppend(&out, " (", units(std::max(e.consumer_debit, sum) - std::min(e.consumer_debit, sum)),
                    e.consumer_debit > sum ? " debited but never sent: lost" : " sent beyond the debit");
    out += ")";
  }
  return out + ".";
}

// Mermaid text: no statement separators, entity codes or line breaks inside a label.
std::string label(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case ';': out += ','; break;
      case '#': out += "no. "; break;
      case '\n':
      case '\r': out += ' '; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string opt_id(const std::optional<spec::Id>& id, std::string_view prefix) {
  return id ? absl::StrCat(to_absl(prefix), id->to_string()) : "";
}

// One diagram line for an event (empty: nothing to draw).
std::string draw(const spec::Event& event, std::uint64_t line) {
  const std::string at = absl::StrCat(" (line ", line, ")");
  struct V {
    const std::string& at;
    std::string operator()(const spec::Connect& e) { return absl::StrCat("Note over B,L: connection ", e.cnx.to_string(), " established", at); }
    std::string operator()(const spec::Subscribe& e) { return absl::StrCat("L->>B: Subscribe consumer ", e.consumer, opt_id(e.inc, ", inc "), at); }
    std::string operator()(const spec::SubscribeOk& e) { return absl::StrCat("B->>L: Subscribe OK consumer ", e.consumer, at); }
    std::string operator()(const spec::SubscribeFail& e) { return absl::StrCat("B-xL: Subscribe failed consumer ", e.consumer, at); }
    std::string operator()(const spec::Flow& e) { return absl::StrCat("L->>B: Flow ", e.permits, " permits consumer ", e.consumer, opt_id(e.inc, ", inc "), at); }
    std::string operator()(const spec::Message& e) {
      std::vector<std::string> f;
      if (e.message_permits) f.push_back(absl::StrCat("message_permits ", *e.message_permits));
      else f.push_back("no message_permits");
      if (!e.ack_set.absent()) {
        f.push_back(spec::acknowledged_text(e.ack_set, e.batch_size.value_or(0)));
      }
      if (e.batch_size) f.push_back(absl::StrCat("B ", *e.batch_size));
      if (e.epoch) f.push_back(absl::StrCat("epoch ", *e.epoch));
      return absl::StrCat("B->>L: Message cmd ", e.cmd.to_string(), " (", absl::StrJoin(f, ", "), ")", at);
    }
    std::string operator()(const spec::Ack& e) {
      return absl::StrCat("L->>B: Ack cmd ", e.cmd.to_string(),
                          e.validation_error ? absl::StrCat(" with validation error ", *e.validation_error) : "", at);
    }
    std::string operator()(const spec::CloseConsumer& e) { return absl::StrCat("B->>L: CloseConsumer consumer ", e.consumer, at); }
    std::string operator()(const spec::Disconnect& e) { return absl::StrCat("Note over B,L: connection ", e.cnx.to_string(), " closed", at); }
    std::string operator()(const spec::Quiescent& e) { return absl::StrCat("Note over B,A: quiescent, consumer ", e.consumer, " on ", e.cnx.to_string(), at); }
    std::string operator()(const spec::IncOpen& e) { return absl::StrCat("Note over L,C: permit state inc ", e.inc.to_string(), " opened for consumer ", e.consumer, " on ", e.cnx.to_string(), at); }
    std::string operator()(const spec::IncFlowEnabled& e) { return absl::StrCat("Note over C: inc ", e.inc.to_string(), " may send Flow", at); }
    std::string operator()(const spec::IncClose& e) { return absl::StrCat("Note over L,C: inc ", e.inc.to_string(), " ended (", to_absl(spec::close_reason_name(e.reason)), ")", at); }
    std::string operator()(const spec::Recv& e) {
      std::vector<std::string> f;
      if (e.message_permits) f.push_back(absl::StrCat("message_permits ", *e.message_permits));
      if (!e.ack_set.absent()) f.push_back(spec::acknowledged_text(e.ack_set, 0));
      return absl::StrCat("L->>C: cmd ", e.cmd.to_string(), " arrives on inc ", e.inc.to_string(),
                          f.empty() ? "" : absl::StrCat(" (", absl::StrJoin(f, ", "), ")"), at);
    }
    std::string operator()(const spec::Resolve& e) { return absl::StrCat("Note over C: cmd ", e.cmd.to_string(), " P = ", e.p, " (", to_absl(spec::permit_source_name(e.source)), ")", at); }
    std::string operator()(const spec::Metadata& e) { return absl::StrCat("Note over C: cmd ", e.cmd.to_string(), " metadata, B = ", e.batch_size, at); }
    std::string operator()(const spec::Corrupt& e) {
      return absl::StrCat("Note over C: cmd ", e.cmd.to_string(), " ", to_absl(spec::failure_stage_name(e.stage)), " failure",
                          e.index ? absl::StrCat(" at index ", *e.index) : "", at);
    }
    std::string operator()(const spec::Claim& e) {
      return absl::StrCat("C->>A: message ", e.msg.to_string(), " handed off (cmd ", e.cmd.to_string(),
                          e.index ? absl::StrCat(" index ", *e.index) : "", ", 1 unit claimed)", at);
    }
    std::string operator()(const spec::Restore& e) { return absl::StrCat("A--xC: hand-off of ", e.msg.to_string(), " failed, unit back to cmd ", e.cmd.to_string(), at); }
    std::string operator()(const spec::Skip& e) { return absl::StrCat("Note over C: cmd ", e.cmd.to_string(), " index ", e.index, " skipped (", to_absl(spec::skip_reason_name(e.reason)), ")", at); }
    std::string operator()(const spec::Transfer& e) { return absl::StrCat("Note over C: cmd ", e.cmd.to_string(), " owned by the ", to_absl(spec::transfer_path_name(e.path)), " path", at); }
    std::string operator()(const spec::DirectReturn& e) {
      return absl::StrCat("C->>C: cmd ", e.cmd.to_string(), " returns ", e.n, " directly", e.path ? absl::StrCat(" (", to_absl(e.path->name()), ")") : "", at);
    }
    std::string operator()(const spec::Settle& e) { return absl::StrCat("C->>C: cmd ", e.cmd.to_string(), " settles, returns ", e.n, at); }
    std::string operator()(const spec::MsgReturn& e) { return absl::StrCat("A-->>C: message ", e.msg.to_string(), " done, returns ", e.n, at); }
    std::string operator()(const spec::Drop& e) {
      return absl::StrCat("Note over C: ", e.n, " dropped", opt_id(e.cmd, " from cmd "), opt_id(e.msg, " from message "), " (incarnation ended)", at);
    }
    std::string operator()(const spec::ProtocolError& e) { return absl::StrCat("C-xL: protocol error (", e.reason, "), connection ", e.cnx.to_string(), " closed", at); }
    std::string operator()(const spec::Send& e) {
      std::vector<std::string> f;
      for (const spec::SentEntry& s : e.entries) {
        f.push_back(absl::StrCat("cmd ", s.cmd.to_string(), " B=", s.entry.batch_size,
                                 !s.entry.admitted ? " rejected" : (s.p ? absl::StrCat(" P=", *s.p) : " admitted")));
      }
      return absl::StrCat("Note over B: send to consumer ", e.consumer, ", ", absl::StrJoin(f, ", "),
                          ", consumer debit ", e.consumer_debit,
                          e.dispatcher_debit ? absl::StrCat(", dispatcher debit ", *e.dispatcher_debit) : "", at);
    }
    std::string operator()(const spec::ConsumerRemoved& e) { return absl::StrCat("Note over B: consumer ", e.consumer, opt_id(e.inc, " inc "), " removed", at); }
    std::string operator()(const spec::WriteFailed& e) { return absl::StrCat("Note over B: write to consumer ", e.consumer, opt_id(e.inc, " inc "), " failed", at); }
    std::string operator()(const spec::Extension& e) { return absl::StrCat("Note over B,A: extension ", e.ev, at); }
  };
  return std::visit(V{at}, event);
}

}  // namespace

std::optional<RenderFormat> parse_render_format(std::string_view name) {
  if (name == "text") return RenderFormat::kText;
  if (name == "mermaid") return RenderFormat::kMermaid;
  if (name == "json") return RenderFormat::kJson;
  return std::nullopt;
}

Explained explain(trace::Trace t) {
  Explained e;
  e.trace = std::move(t);
  spec::Monitor monitor(e.trace.header, spec::MonitorOptions{.retain_ledger = true});
  Collector collector;
  for (std::size_t i = 0; i < e.trace.events.size(); ++i) {
    const std::uint64_t line = i < e.trace.lines.size() ? e.trace.lines[i] : i + 2;
    monitor.on_event(e.trace.events[i], line);
    collector.on(e.trace.events[i]);
    if (const auto* send = std::get_if<spec::Send>(&e.trace.events[i])) {
      e.sends.push_back(tell_send(*send, line));
    }
  }
  monitor.finish();
  e.violations = monitor.violations();
  e.deviations = monitor.deviations();
  for (const Story& s : collector.stories()) e.commands.push_back(tell(s, monitor.ledger(s.cmd)));
  return e;
}

std::string render_text(const Explained& e, std::string_view name) {
  const spec::TraceHeader& h = e.trace.header;
  std::string out = absl::StrCat("Counterexample ", to_absl(name), ": ", to_absl(spec::trace_source_name(h.source)),
                                 " trace, ", e.trace.events.size(),
                                 e.trace.events.size() == 1 ? " event" : " events",
                                 ", checked against ruleset ",
                                 to_absl(spec::ruleset(h.ruleset).name));
  if (h.q) absl::StrAppend(&out, ", q ", *h.q);
  if (h.t) absl::StrAppend(&out, ", t ", *h.t);
  out += ".\n\n";
  if (e.violations.empty()) {
    out += "No violation: the trace holds under this ruleset.\n";
  } else {
    absl::StrAppend(&out, e.violations.size() == 1 ? "1 violation:\n" : absl::StrCat(e.violations.size(), " violations:\n"));
    for (const spec::Finding& f : e.violations) {
      const spec::RuleInfo& info = spec::rule_info(f.rule);
      absl::StrAppend(&out, "  ", spec::format_finding(f), "\n    ", to_absl(info.name), " (",
                      to_absl(info.title), ", docs/rules.md ", to_absl(info.section), ")\n");
    }
  }
  if (!e.deviations.empty()) {
    out += "\nKnown deviations (accepted under this ruleset, not failures):\n";
    for (const spec::Finding& f : e.deviations) {
      const spec::RuleInfo& info = spec::rule_info(f.rule);
      absl::StrAppend(&out, "  ", spec::format_finding(f), "\n    ", to_absl(info.name), " (", to_absl(info.title), ")\n");
    }
  }
  if (!e.commands.empty()) {
    out += "\nWhat happened to each command:\n";
    for (const std::string& c : e.commands) absl::StrAppend(&out, "  ", c, "\n");
  }
  if (!e.sends.empty()) {
    out += "\nWhat the broker sent:\n";
    for (const std::string& s : e.sends) absl::StrAppend(&out, "  ", s, "\n");
  }
  return out;
}

std::string render_mermaid(const Explained& e) {
  std::string out =
      "sequenceDiagram\n"
      "    participant B as Broker\n"
      "    participant L as Connection event loop\n"
      "    participant C as Client consumer\n"
      "    participant A as Application\n";
  // Findings by line, drawn right after the event that exposed them (end-of-trace findings
  // of the last line after it).
  std::multimap<std::uint64_t, std::string> notes;
  for (const spec::Finding& f : e.violations) {
    notes.emplace(f.line, absl::StrCat("VIOLATION ", spec::format_finding(f)));
  }
  for (const spec::Finding& f : e.deviations) {
    notes.emplace(f.line, absl::StrCat("known deviation ", spec::format_finding(f)));
  }
  const auto flush = [&](std::uint64_t upto) {
    while (!notes.empty() && notes.begin()->first <= upto) {
      absl::StrAppend(&out, "    Note over B,A: ", label(notes.begin()->second), "\n");
      notes.erase(notes.begin());
    }
  };
  for (std::size_t i = 0; i < e.trace.events.size(); ++i) {
    const std::uint64_t line = i < e.trace.lines.size() ? e.trace.lines[i] : i + 2;
    flush(line - 1);
    const std::string d = draw(e.trace.events[i], line);
    if (!d.empty()) absl::StrAppend(&out, "    ", label(d), "\n");
    flush(line);
  }
  flush(UINT64_MAX);
  return out;
}

std::string render_jsonl(const Explained& e) {
  std::string out = trace::write_header(e.trace.header) + "\n";
  for (const spec::Event& event : e.trace.events) {
    trace::append_event(&out, event);
    out += "\n";
  }
  // Re-check in this output's numbering, so the comments point at its lines.
  const spec::MonitorReport r = spec::check_trace(e.trace.header, e.trace.events);
  for (const spec::Finding& f : r.violations) absl::StrAppend(&out, "# violation: ", spec::format_finding(f), "\n");
  for (const spec::Finding& f : r.deviations) absl::StrAppend(&out, "# known deviation: ", spec::format_finding(f), "\n");
  return out;
}

}  // namespace permitcheck::cli
