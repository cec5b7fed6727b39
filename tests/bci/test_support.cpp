// SPDX-License-Identifier: Apache-2.0
#include "test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "class_file.h"
#include "code.h"
#include "test_config.h"

namespace bcitest {

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void write_file(const fs::path& path, const std::vector<uint8_t>& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> class_files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".class") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool Jdk::present() const {
  return access((home + "/bin/java").c_str(), X_OK) == 0;
}

fs::path Jdk::image_dir() const {
  return build_dir() / "tests/bci" / (name + "-image");
}

Jdk jdk17() {
  return {"jdk17", TEST_JDK17_HOME};
}
Jdk jdk25() {
  return {"jdk25", TEST_JDK25_HOME};
}

fs::path build_dir() {
  return TEST_BUILD_DIR;
}
fs::path java_classes_dir() {
  return build_dir() / "java/bci-test-classes";
}

CommandResult run_command(const std::string& command, int timeout_seconds) {
  std::string full =
      "timeout -k 5 " + std::to_string(timeout_seconds) + " sh -c '" + command + "' 2>&1";
  CommandResult result;
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::vector<uint8_t> stub_tracker_class(const std::string& internal_name) {
  using namespace bci;
  ClassFile cf;
  cf.major_version = 52;
  cf.cp.entries.resize(1);
  cf.access_flags = 0x0001 | 0x0010 | 0x0020;  // public final super
  cf.this_class = cf.cp.add_class(internal_name);
  cf.super_class = cf.cp.add_class("java/lang/Object");
  uint16_t code_name = cf.cp.add_utf8("Code");
  const std::pair<const char*, const char*> methods[] = {
      {"methodEntry", "(II)V"},
      {"methodEntryWithReceiver", "(IILjava/lang/Object;)V"},
      {"methodExit", "(II)V"},
      {"objectInit", "(Ljava/lang/Object;)V"},
      {"newArray", "(Ljava/lang/Object;)V"},
      {"instruction", "(III)V"},
      {"instructionIf", "(IIIZ)V"},
      {"instructionTableswitch", "(IIIIII)V"},
      {"instructionLookupswitch", "(IIIII)V"},
      {"monitorExit", "(Ljava/lang/Object;)V"},
  };
  for (const auto& [name, descriptor] : methods) {
    Member m;
    m.access_flags = 0x0001 | 0x0008;  // public static
    m.name_index = cf.cp.add_utf8(name);
    m.descriptor_index = cf.cp.add_utf8(descriptor);
    CodeAttribute code;
    code.max_stack = 0;
    code.max_locals = static_cast<uint16_t>(descriptor_argument_slots(descriptor));
    code.code = {op::kReturn};
    Attribute a;
    a.name_index = code_name;
    a.data = write_code(code, false);
    m.attributes.push_back(std::move(a));
    cf.methods.push_back(std::move(m));
  }
  return write_class(cf);
}

bci::InjectionOptions all_hooks(const std::string& tracker, uint32_t class_number) {
  bci::InjectionOptions o;
  o.tracker_class = tracker;
  o.class_number = class_number;
  o.method_entry_exit = true;
  o.entry_with_receiver = true;
  o.object_init = true;
  o.new_arrays = true;
  o.instructions = true;
  o.monitor_exits = true;
  return o;
}

}  // namespace bcitest
