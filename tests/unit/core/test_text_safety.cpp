// Escape sequences, raw HTML and invalid UTF-8 from outside gpuvet are shown, never obeyed, by every
// printer: the terminal (gpuvet's own colours kept), Markdown cells and HTML.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/text_safety.hpp"
#include "monitor/listen_address.hpp"
#include "report/style.hpp"
#include "report/svg.hpp"

using namespace gpuvet;

namespace {
const std::string kTitle = "host\x1b]0;TITLE\x07\x1b[2J\x1b[31m";
}

TEST(TextSafety, ControlsBecomeVisibleEscapes) {
    EXPECT_EQ(visible_text(kTitle), "host\\x1b]0;TITLE\\x07\\x1b[2J\\x1b[31m");
    EXPECT_EQ(visible_text("a\r\nb\tc"), "a\\x0d\nb\tc");
    EXPECT_EQ(visible_text("a\nb", false), "a\\x0ab");
    EXPECT_EQ(visible_text(std::string("nul\0here", 8)), "nul\\x00here");
    EXPECT_EQ(visible_text("\xc2\x9b"
                           "2J"),
              "\\u009b2J");  // C1 CSI
    EXPECT_EQ(visible_text("abc\xe2\x80\xae"
                           "txt"),
              "abc\\u202etxt");                                           // right-to-left override
    EXPECT_EQ(visible_text("\xff\xfe\xc0\xaf"), "\\xff\\xfe\\xc0\\xaf");  // not UTF-8, overlong '/'
    EXPECT_EQ(visible_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
    EXPECT_EQ(visible_text("H100 80GB HBM3 · 90 °C ✓"), "H100 80GB HBM3 · 90 °C ✓");
}

TEST(TextSafety, TerminalKeepsOnlyStyleSequences) {
    EXPECT_EQ(terminal_safe("\x1b[1mbold\x1b[0m \x1b[1;31mFAIL\x1b[0m \x1b[2mdim\x1b[m"),
              "\x1b[1mbold\x1b[0m \x1b[1;31mFAIL\x1b[0m \x1b[2mdim\x1b[m");
    EXPECT_EQ(terminal_safe("\x1b[2J\x1b[H\x1b]0;PWNED\x07"), "\\x1b[2J\\x1b[H\\x1b]0;PWNED\\x07");
}

TEST(TextSafety, TerminalShowsStylesGpuvetNeverWrites) {
    // Conceal would hide what follows; blink, reverse, backgrounds and extended colours forge emphasis.
    EXPECT_EQ(terminal_safe("\x1b[8mhidden\x1b[0m"), "\\x1b[8mhidden\x1b[0m");
    EXPECT_EQ(terminal_safe("\x1b[1;8mx"), "\\x1b[1;8mx");
    EXPECT_EQ(terminal_safe("\x1b[5m\x1b[7m\x1b[41m"), "\\x1b[5m\\x1b[7m\\x1b[41m");
    EXPECT_EQ(terminal_safe("\x1b[38;5;196mred"), "\\x1b[38;5;196mred");
    EXPECT_EQ(terminal_safe("\x1b[031m\x1b[0000m"), "\\x1b[031m\\x1b[0000m");  // no padded forms either
    // gpuvet's own styles, as Style::paint and Style::verdict write them, pass.
    Style st;
    st.color = true;
    for (Verdict v : {Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::Error, Verdict::Skip})
        EXPECT_EQ(terminal_safe(st.verdict(v)), st.verdict(v)) << to_string(v);
    EXPECT_EQ(terminal_safe(st.bold("x") + st.dim("y") + st.paint("z", "36")),
              st.bold("x") + st.dim("y") + st.paint("z", "36"));
}

TEST(TextSafety, MarkdownCellsCannotBreakOutOrOpenHtml) {
    std::string md = markdown_text("</script><script>alert(\"X\")</script>\n| cell | break |\n**PASS** [x](y)");
    EXPECT_EQ(md.find('<'), std::string::npos) << md;
    EXPECT_EQ(md.find('\n'), std::string::npos) << md;
    EXPECT_NE(md.find("\\| cell \\| break \\|"), std::string::npos) << md;
    EXPECT_NE(md.find("[x\\](y)"), std::string::npos) << md;
    EXPECT_EQ(markdown_text("warn > 79 · 0 -> 1 [the GPU's limit] a < b"),
              "warn > 79 · 0 -> 1 [the GPU's limit] a < b");
}

TEST(TextSafety, HtmlIsValidUtf8WithoutControls) {
    std::string h = escape_html(std::string("a\0b\x1b[2J\xff<", 9));
    EXPECT_EQ(h, "a\\x00b\\x1b[2J\\xff&lt;");
}

TEST(TextSafety, EveryStringOfADocument) {
    nlohmann::json j = {{"hostname", kTitle}, {"gpus", {{{"name", "\x1b[2J"}}, {{"name", "ok"}}}}, {"n", 3}};
    make_strings_visible(j);
    EXPECT_EQ(j["hostname"], "host\\x1b]0;TITLE\\x07\\x1b[2J\\x1b[31m");
    EXPECT_EQ(j["gpus"][0]["name"], "\\x1b[2J");
    EXPECT_EQ(j["gpus"][1]["name"], "ok");
    EXPECT_EQ(j["n"], 3);
}

TEST(ListenAddress, LoopbackShortFormsAreLoopback) {
    for (const char* h : {"127.1", "127.0.1", "2130706433", "0x7f.1"}) EXPECT_TRUE(is_loopback(h)) << h;
    for (const char* h : {"10.1", "0.0.0.0", "1.2.3.4"}) EXPECT_FALSE(is_loopback(h)) << h;
}
