// SPDX-License-Identifier: Apache-2.0
// jvmprof serve's object view and dump comparison over HTTP (the web server on a loopback port,
// cpp-httplib's client), on text profiles whose heaps are known: two saved files and a live
// format=a stream whose heap dump arrives over a socket.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "session_registry.h"
#include "web_server.h"

namespace {

using namespace std::chrono_literals;
using nlohmann::json;

const char kHeader[] =
    "JAVA PROFILE 1.0.1, created Wed Nov 25 09:00:00 2026\n\nprelude\n--------\n\n";

// `cells` Cell objects in a chain from Holder's static `head` (ids 0x1000, 0x1008, ...), and a
// Sub (extends Cell) whose `next` is the head.
std::string heap_dump(int cells) {
  std::string out = "HEAP DUMP BEGIN (1 objects, 16 bytes) Wed Nov 25 09:00:00 2026\n";
  out += "ROOT 20 (kind=<system class>, name=Holder)\n";
  char line[128];
  for (int i = 0; i < cells; ++i) {
    std::snprintf(line, sizeof line, "OBJ %x (sz=24, trace=300000, class=Cell@30)\n",
                  0x1000 + 8 * i);
    out += line;
    if (i + 1 < cells) {
      std::snprintf(line, sizeof line, "\tnext\t\t%x\n", 0x1000 + 8 * (i + 1));
      out += line;
    }
  }
  out += "OBJ 900 (sz=24, trace=300000, class=Sub@40)\n\tnext\t\t1000\n";
  out += "CLS 20 (name=Holder, trace=300000)\n\tstatic head\t1000\n\tstatic sub\t900\n";
  out += "CLS 30 (name=Cell, trace=300000)\nCLS 40 (name=Sub, trace=300000)\n\tsuper\t\t30\n";
  out += "HEAP DUMP END\n";
  return out;
}

class HeapRoutes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "jvmprof-heap-routes-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_ + "/spool");
    jvmprof::SessionLimits limits;
    limits.spool_dir = dir_ + "/spool";
    registry_ = std::make_unique<jvmprof::SessionRegistry>(limits);
    add_file("old.txt", std::string(kHeader) + heap_dump(3));  // profile 1
    add_file("new.txt", std::string(kHeader) + heap_dump(5));  // profile 2
    jvmprof::WebOptions options;
    options.token = "secret-token";
    server_ = std::make_unique<jvmprof::WebServer>(*registry_, options);
    std::string error;
    port_ = server_->bind(error);
    ASSERT_GT(port_, 0) << error;
    thread_ = std::thread([this] { server_->run(); });
  }
  void TearDown() override {
    server_->stop();
    if (thread_.joinable()) thread_.join();
    registry_->stop_all();
    registry_->clear();
    std::filesystem::remove_all(dir_);
  }

  void add_file(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    registry_->add(path, fd, false, text.size());
  }

  // GET with the token; the status and the parsed body.
  std::pair<int, json> get(const std::string& path, bool with_token = true) {
    httplib::Client client("127.0.0.1", port_);
    httplib::Headers headers;
    if (with_token) headers.emplace("X-Jvmprof-Token", "secret-token");
    // Files are read by their sessions' threads: wait until the heap can be opened.
    for (int attempt = 0;; ++attempt) {
      auto res = client.Get(path, headers);
      if (!res) return {0, json()};
      json body = json::parse(res->body, nullptr, false);
      const bool still_reading =
          res->status == 404 && body.is_object() &&
          body.value("error", "").find("still being read") != std::string::npos;
      if (!still_reading || attempt > 500) return {res->status, body};
      std::this_thread::sleep_for(10ms);
    }
  }

  std::string dir_;
  std::unique_ptr<jvmprof::SessionRegistry> registry_;
  std::unique_ptr<jvmprof::WebServer> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(HeapRoutes, ObjectShowsFieldsWithLinksAndItsReferrers) {
  auto [status, sub] = get("/api/profiles/2/heap/object?id=0x900");
  ASSERT_EQ(status, 200) << sub.dump();
  EXPECT_EQ(sub["kind"], "instance");
  EXPECT_EQ(sub["object"]["class"], "Sub");
  EXPECT_EQ(sub["object"]["shallow"], 24);
  EXPECT_TRUE(sub["textDump"].get<bool>());
  ASSERT_EQ(sub["fields"].size(), 1u);
  EXPECT_EQ(sub["fields"][0]["name"], "next");
  EXPECT_EQ(sub["fields"][0]["declaredBy"], "Cell");
  EXPECT_EQ(sub["fields"][0]["ref"], "0x1000");
  EXPECT_EQ(sub["fields"][0]["target"]["class"], "Cell");
  // The head's retained size: the whole chain of 5 cells.
  EXPECT_EQ(sub["fields"][0]["target"]["retained"], 5 * 24);

  auto [rs, refs] = get("/api/profiles/2/heap/referrers?id=0x1000");
  ASSERT_EQ(rs, 200) << refs.dump();
  EXPECT_EQ(refs["total"], 2);
  std::set<std::string> vias;
  for (const auto& r : refs["referrers"]) vias.insert(r["via"].get<std::string>());
  EXPECT_EQ(vias, (std::set<std::string>{"static head", "next"}));
  auto [ps, page] = get("/api/profiles/2/heap/referrers?id=0x1000&offset=1&limit=1");
  ASSERT_EQ(ps, 200);
  EXPECT_EQ(page["total"], 2);
  ASSERT_EQ(page["referrers"].size(), 1u);
  EXPECT_EQ(page["referrers"][0]["object"]["id"], refs["referrers"][1]["object"]["id"]);

  auto [cs, holder] = get("/api/profiles/2/heap/object?id=0x20");
  ASSERT_EQ(cs, 200);
  EXPECT_EQ(holder["kind"], "class");
  EXPECT_EQ(holder["className"], "Holder");
  EXPECT_EQ(holder["object"]["class"], "class Holder") << "a class object is named for its class";
  ASSERT_EQ(holder["statics"].size(), 2u);
  EXPECT_EQ(holder["statics"][1]["name"], "sub");
  EXPECT_EQ(holder["statics"][1]["target"]["class"], "Sub");
}

// Down the dominator tree: Holder's class object dominates the chain's head (reached through
// `head` and through Sub) and Sub; the head dominates the next cell, and so on.
TEST_F(HeapRoutes, DominatedChildrenPagedBiggestFirst) {
  auto [status, holder] = get("/api/profiles/2/heap/dominated?id=0x20");
  ASSERT_EQ(status, 200) << holder.dump();
  EXPECT_EQ(holder["id"], "0x20");
  ASSERT_GE(holder["children"].size(), 2u) << holder.dump();
  EXPECT_EQ(holder["total"], holder["children"].size());
  EXPECT_EQ(holder["children"][0]["id"], "0x1000");
  EXPECT_EQ(holder["children"][0]["class"], "Cell");
  EXPECT_EQ(holder["children"][0]["retained"], 5 * 24);
  bool sub = false;
  for (const auto& c : holder["children"]) sub = sub || c["id"] == "0x900";
  EXPECT_TRUE(sub) << holder.dump();

  auto [hs, head] = get("/api/profiles/2/heap/dominated?id=0x1000");
  ASSERT_EQ(hs, 200) << head.dump();
  EXPECT_EQ(head["total"], 1);
  EXPECT_EQ(head["children"][0]["id"], "0x1008");
  EXPECT_EQ(head["children"][0]["retained"], 4 * 24);
  auto [ls, last] = get("/api/profiles/2/heap/dominated?id=0x1020");
  ASSERT_EQ(ls, 200);
  EXPECT_EQ(last["total"], 0);

  auto [ps, page] = get("/api/profiles/2/heap/dominated?id=0x20&offset=1&limit=1");
  ASSERT_EQ(ps, 200);
  EXPECT_EQ(page["total"], holder["total"]);
  EXPECT_EQ(page["offset"], 1);
  ASSERT_EQ(page["children"].size(), 1u);
  EXPECT_EQ(page["children"][0], holder["children"][1]);

  auto [rs, top] = get("/api/profiles/2/heap/dominated?id=root");
  ASSERT_EQ(rs, 200) << top.dump();
  EXPECT_EQ(top["id"], "root");
  bool holder_on_top = false;
  for (const auto& c : top["children"]) holder_on_top = holder_on_top || c["id"] == "0x20";
  EXPECT_TRUE(holder_on_top) << top.dump();

  EXPECT_EQ(get("/api/profiles/2/heap/dominated?id=0x12345").first, 404);
  EXPECT_EQ(get("/api/profiles/2/heap/dominated?id=top").first, 400);
  EXPECT_EQ(get("/api/profiles/2/heap/dominated?id=0x20&limit=0").first, 400);
  EXPECT_EQ(get("/api/profiles/2/heap/object?id=root").first, 400);
}

// Indexing reports its phases to the profile's status (what the UI's progress bar shows); once
// done, the last phase is kept at 100 %.
TEST_F(HeapRoutes, IndexingProgressInTheProfileStatus) {
  auto [s0, before] = get("/api/profiles/1");
  ASSERT_EQ(s0, 200);
  EXPECT_FALSE(before["indexing"]["active"].get<bool>());
  EXPECT_EQ(before["indexing"]["phase"], "");
  ASSERT_EQ(get("/api/profiles/1/heap/summary").first, 200);
  auto [s1, after] = get("/api/profiles/1");
  ASSERT_EQ(s1, 200);
  EXPECT_FALSE(after["indexing"]["active"].get<bool>());
  EXPECT_NE(after["indexing"]["phase"], "") << after.dump();
  EXPECT_EQ(after["indexing"]["percent"], 100) << after.dump();
}

TEST_F(HeapRoutes, DiffOfTwoLoadedDumps) {
  auto [status, diff] = get("/api/heap/diff?before=1&after=2");
  ASSERT_EQ(status, 200) << diff.dump();
  EXPECT_EQ(diff["before"], 1);
  EXPECT_EQ(diff["after"], 2);
  // Cell grew by two instances; the only other change is java.lang.Class's retained bytes
  // (Holder's class object holds the longer chain).
  json cell;
  for (const auto& c : diff["classes"]) {
    if (c["class"] == "Cell")
      cell = c;
    else
      EXPECT_EQ(c["instancesBefore"], c["instancesAfter"]) << c.dump();
  }
  ASSERT_TRUE(cell.is_object()) << diff.dump();
  EXPECT_EQ(cell["class"], "Cell");
  EXPECT_EQ(cell["instancesBefore"], 3);
  EXPECT_EQ(cell["instancesAfter"], 5);
  EXPECT_EQ(cell["shallowAfter"].get<int>() - cell["shallowBefore"].get<int>(), 2 * 24);
}

// Every class is reachable: filtered by part of its name in any case, sorted by any column both
// ways, a page at a time.
TEST_F(HeapRoutes, ClassHistogramFilteredSortedAndPaged) {
  auto [status, all] = get("/api/profiles/2/heap/classes?sort=instances");
  ASSERT_EQ(status, 200) << all.dump();
  ASSERT_GE(all["total"].get<int>(), 2);
  EXPECT_EQ(all["matched"], all["total"]);
  ASSERT_EQ(all["classes"].size(), all["total"].get<size_t>());
  EXPECT_EQ(all["classes"][0]["name"], "Cell");  // 5 instances, the most
  EXPECT_EQ(all["classes"][0]["instances"], 5);
  for (size_t i = 1; i < all["classes"].size(); ++i)
    EXPECT_GE(all["classes"][i - 1]["instances"].get<int>(),
              all["classes"][i]["instances"].get<int>());

  auto [s2, up] = get("/api/profiles/2/heap/classes?sort=instances&order=asc");
  ASSERT_EQ(s2, 200);
  EXPECT_EQ(up["classes"].back()["name"], "Cell");
  EXPECT_EQ(up["order"], "asc");

  auto [s3, filtered] = get("/api/profiles/2/heap/classes?filter=cE");
  ASSERT_EQ(s3, 200);
  EXPECT_EQ(filtered["matched"], 1);
  EXPECT_EQ(filtered["total"], all["total"]);
  ASSERT_EQ(filtered["classes"].size(), 1u);
  EXPECT_EQ(filtered["classes"][0]["name"], "Cell");

  // Pages: one class each, together the whole list in the same order, without overlap.
  std::vector<std::string> names;
  for (int offset = 0; offset < all["total"].get<int>(); ++offset) {
    auto [s4, page] =
        get("/api/profiles/2/heap/classes?sort=name&limit=1&offset=" + std::to_string(offset));
    ASSERT_EQ(s4, 200);
    ASSERT_EQ(page["classes"].size(), 1u);
    names.push_back(page["classes"][0]["name"]);
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  auto [s5, by_name_desc] = get("/api/profiles/2/heap/classes?sort=name&order=desc");
  ASSERT_EQ(s5, 200);
  EXPECT_EQ(by_name_desc["classes"][0]["name"], names.back());

  EXPECT_EQ(get("/api/profiles/2/heap/classes?sort=size").first, 400);
  EXPECT_EQ(get("/api/profiles/2/heap/classes?limit=1001").first, 400);
  EXPECT_EQ(get("/api/profiles/2/heap/classes?offset=-1").first, 400);
}

// A live format=a stream's event lines (a Java thread's SLEEP under monitor=y, a thread starting,
// the agent's SETTINGS) fall between the dump's lines, even between a record and its values: the
// dump still opens, with every object and reference.
TEST_F(HeapRoutes, StreamEventLinesInsideATextDumpAreSkipped) {
  std::string dump = heap_dump(3);
  const std::string events =
      "SLEEP: timeout=3, thread 200011\nTHREAD START (obj=50, id = 200012, name=\"w\", "
      "group=\"main\")\nSETTINGS: serial=0 depth=4\n";
  for (const std::string at : {"OBJ 1008", "\tnext\t\t1010", "CLS 30"}) {
    const size_t where = dump.find(at);
    ASSERT_NE(where, std::string::npos) << at;
    dump.insert(where, events);
  }
  add_file("events.txt", std::string(kHeader) + dump);  // profile 3
  auto [status, summary] = get("/api/profiles/3/heap/summary");
  ASSERT_EQ(status, 200) << summary.dump();
  auto [cs, cells] = get("/api/profiles/3/heap/classes?filter=cell");
  ASSERT_EQ(cs, 200);
  ASSERT_EQ(cells["classes"].size(), 1u);
  EXPECT_EQ(cells["classes"][0]["instances"], 3);
  auto [os, second] = get("/api/profiles/3/heap/object?id=0x1008");
  ASSERT_EQ(os, 200) << second.dump();
  ASSERT_EQ(second["fields"].size(), 1u);
  EXPECT_EQ(second["fields"][0]["ref"], "0x1010") << "the value line after the events was kept";
}

TEST_F(HeapRoutes, BadRequestsAreRefusedWithOneMessage) {
  EXPECT_EQ(get("/api/profiles/2/heap/object?id=0x900", false).first, 401);
  EXPECT_EQ(get("/api/heap/diff?before=1&after=2", false).first, 401);
  EXPECT_EQ(get("/api/profiles/2/heap/object?id=zz").first, 400);
  EXPECT_EQ(get("/api/profiles/2/heap/object").first, 400);
  EXPECT_EQ(get("/api/profiles/2/heap/object?id=0x900&limit=0").first, 400);
  EXPECT_EQ(get("/api/profiles/2/heap/object?id=0x900&limit=5000").first, 400);
  EXPECT_EQ(get("/api/profiles/2/heap/referrers?id=0x900&offset=-1").first, 400);
  auto [missing, body] = get("/api/profiles/2/heap/object?id=0x12345");
  EXPECT_EQ(missing, 404);
  EXPECT_NE(body["error"].get<std::string>().find("no object"), std::string::npos);
  EXPECT_EQ(get("/api/profiles/99/heap/object?id=0x900").first, 404);
  EXPECT_EQ(get("/api/heap/diff?before=1").first, 400);
  EXPECT_EQ(get("/api/heap/diff?before=1&after=99").first, 404);
}

// A live format=a stream: its text heap dump is spooled and indexed like a binary one.
TEST_F(HeapRoutes, LiveTextStreamHeapDump) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  auto live = registry_->add("live", fds[0], true, 0);  // profile 3
  ASSERT_TRUE(live);
  auto [before, none] = get("/api/profiles/3/heap/object?id=0x900");
  EXPECT_EQ(before, 404);
  const std::string text = std::string(kHeader) + heap_dump(4);
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  json sub;
  for (int i = 0; i < 500; ++i) {
    auto [status, body] = get("/api/profiles/3/heap/object?id=0x900");
    if (status == 200) {
      sub = body;
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(sub.is_object()) << "the live text dump was never indexed";
  EXPECT_EQ(sub["fields"][0]["target"]["retained"], 4 * 24);
  ::close(fds[1]);
}

}  // namespace
