// UTF-8 decoding and the Unicode classes that text from clients may not
// carry where it names something (topics, patterns) or reaches a log line.
//
// Hidden characters: a topic is shown to people (logs, the console, `tickwire
// channels`) and compared byte for byte by programs, so a character that
// prints as nothing, moves the cursor or reorders what follows lets two
// topics look alike while being different channels (NYSE/EQ/IBM and
// NYSE/EQ/I<U+200B>BM), or a log line look like two. Hidden means one of:
//   Cc  controls: U+0000-U+001F, U+007F-U+009F (C0, DEL, C1 such as U+0085 NEL)
//   Cf  format characters: soft hyphen, zero-width space and joiners, the
//       bidirectional marks, embeddings, overrides and isolates, word joiner
//       and invisible operators, BOM, interlinear annotation, tag characters
//   Zl, Zp  line and paragraph separators (U+2028, U+2029)
//   noncharacters: U+FDD0-U+FDEF and the last two code points of each plane
// (Unicode 15.1's general categories; the list is in unicode.cc.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tw::unicode {

// The length of the well-formed UTF-8 sequence (RFC 3629: shortest form, no
// surrogates, at most U+10FFFF) at the start of `bytes`, 0 when there is none;
// `code_point` gets its value.
size_t decode(std::string_view bytes, char32_t& code_point);

bool valid_utf8(std::string_view text);
bool is_hidden(char32_t code_point);

enum class TextFault { None, NotUtf8, Hidden };
// The first fault of `text` as a name: invalid UTF-8, or a hidden character.
TextFault find_fault(std::string_view text);

// `text` made safe for one log line: every hidden character and every byte
// that is not UTF-8 written as \xNN (bytes, ASCII controls) or \u{XXXX}
// (other code points), and
// '\' as "\\", so no client text can end a line, move the terminal's cursor,
// reorder what follows or pass an escape off as its own.
std::string escape(std::string_view text);
// Whether escape() would change `text`.
bool needs_escape(std::string_view text);

}  // namespace tw::unicode
