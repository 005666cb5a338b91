// Stand-in for the {fmt} library, enough for Kompute 0.9.0 as vkdiff builds it: with logging
// compiled out (KOMPUTE_OPT_LOG_LEVEL_DISABLED) Kompute only calls fmt::format("... {} ...", a, b)
// to word a few exception messages. Using this instead of libfmt removes a build dependency.
#pragma once
#include <sstream>
#include <string>

namespace fmt {
namespace detail {
inline void format_into(std::ostringstream& os, const char* s) { os << s; }

template <class T, class... Rest>
void format_into(std::ostringstream& os, const char* s, const T& value, const Rest&... rest) {
    for (; *s; ++s) {
        if (s[0] == '{' && s[1] == '}') {
            os << value;
            format_into(os, s + 2, rest...);
            return;
        }
        os << *s;
    }
}
}  // namespace detail

template <class... Args>
std::string format(const char* f, const Args&... args) {
    std::ostringstream os;
    detail::format_into(os, f, args...);
    return os.str();
}
}  // namespace fmt
