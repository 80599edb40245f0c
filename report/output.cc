#include "report/output.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace permitcheck::report {

bool write_report(const std::string& path, std::ostream& out, std::string_view text,
                  std::string_view command, std::ostream& err) {
  if (path.empty()) {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (out) return true;
    err << "permitcheck " << command << ": cannot write the report to standard output\n";
    return false;
  }
  errno = 0;
  std::ofstream file(path, std::ios::binary);
  if (file.is_open()) {
    file.write(text.data(), static_cast<std::streamsize>(text.size()));
    file.flush();
    file.close();
  }
  if (file) return true;
  err << "permitcheck " << command << ": cannot write " << path;
  if (errno != 0) err << ": " << std::strerror(errno);
  err << "\n";
  return false;
}

}  // namespace permitcheck::report
