#include "flags.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "sizes.hpp"

namespace triaudit {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

[[noreturn]] void bad_value(const std::string& name, const std::string& value, const std::string& why) {
  throw FlagError("--" + name + "=" + value + ": " + why);
}

}  // namespace

void FlagSet::add(const std::string& name, const std::string& help, std::string default_text,
                  std::function<void(const std::string&)> set) {
  flags_.push_back({name, help, std::move(default_text), std::move(set), false});
}

void FlagSet::add_size(const std::string& name, std::uint64_t* target, const std::string& help) {
  add(name, help, format_bytes(*target), [name, target](const std::string& v) {
    try {
      *target = parse_bytes(v);
    } catch (const std::invalid_argument& e) {
      bad_value(name, v, e.what());
    }
  });
}

void FlagSet::add_int(const std::string& name, long long* target, long long min, long long max,
                      const std::string& help) {
  add(name, help, std::to_string(*target), [=](const std::string& v) {
    errno = 0;
    char* end = nullptr;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno == ERANGE) bad_value(name, v, "not an integer");
    if (x < min || x > max)
      bad_value(name, v, "out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    *target = x;
  });
}

void FlagSet::add_double(const std::string& name, double* target, double min, double max, const std::string& help) {
  std::ostringstream def;
  def << *target;
  add(name, help, def.str(), [=](const std::string& v) {
    errno = 0;
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x)) bad_value(name, v, "not a number");
    if (x < min || x > max) {
      std::ostringstream r;
      r << "out of range [" << min << ", " << max << "]";
      bad_value(name, v, r.str());
    }
    *target = x;
  });
}

void FlagSet::add_choice(const std::string& name, std::string* target, std::vector<std::string> choices,
                         const std::string& help) {
  add(name, help + " (" + join(choices, "|") + ")", *target, [=](const std::string& v) {
    for (const auto& c : choices)
      if (c == v) {
        *target = v;
        return;
      }
    bad_value(name, v, "must be one of " + join(choices, ", "));
  });
}

void FlagSet::add_list(const std::string& name, std::vector<std::string>* target, std::vector<std::string> choices,
                       const std::string& help) {
  add(name, help + " (comma-separated of " + join(choices, ",") + ", or all)", join(*target, ","),
      [=](const std::string& v) {
        if (v == "all") {
          *target = choices;
          return;
        }
        std::vector<std::string> picked;
        std::stringstream ss(v);
        std::string item;
        while (std::getline(ss, item, ',')) {
          bool known = false;
          for (const auto& c : choices) known = known || c == item;
          if (!known) bad_value(name, v, "'" + item + "' is not one of " + join(choices, ", "));
          picked.push_back(item);
        }
        if (picked.empty()) bad_value(name, v, "empty list");
        *target = picked;
      });
}

void FlagSet::add_switch(const std::string& name, bool* target, const std::string& help) {
  add(name, help, *target ? "on" : "off", [name, target](const std::string& v) {
    if (v == "true" || v == "on" || v == "1")
      *target = true;
    else if (v == "false" || v == "off" || v == "0")
      *target = false;
    else
      bad_value(name, v, "a switch: --" + name + " alone, or =true / =false");
  });
  flags_.back().is_switch = true;
}

void FlagSet::parse(int* argc, char** argv) const {
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const char* arg = argv[i];
    const Flag* match = nullptr;
    std::string value;
    bool has_value = false;
    if (std::strncmp(arg, "--", 2) == 0) {
      const std::string body = arg + 2;
      const auto eq = body.find('=');
      const std::string key = body.substr(0, eq);
      for (const auto& f : flags_)
        if (f.name == key) match = &f;
      if (eq != std::string::npos) {
        value = body.substr(eq + 1);
        has_value = true;
      }
    }
    if (match == nullptr) {
      argv[out++] = argv[i];
      continue;
    }
    if (!has_value && match->is_switch) value = "true", has_value = true;
    if (!has_value) throw FlagError("--" + match->name + " needs a value: --" + match->name + "=VALUE");
    match->set(value);
  }
  *argc = out;
  argv[out] = nullptr;
}

std::string FlagSet::help() const {
  std::ostringstream os;
  for (const auto& f : flags_)
    os << "  --" << f.name << (f.is_switch ? "" : "=VALUE") << "\n      " << f.help << " [default: " << f.default_text
       << "]\n";
  return os.str();
}

}  // namespace triaudit
