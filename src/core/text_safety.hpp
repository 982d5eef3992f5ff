// Text from outside gpuvet (report fields, hostnames, GPU names, a job's arguments, tags, the error
// texts of libraries and scripts) reaches a terminal or a Markdown page only through here, so a
// crafted string cannot move the cursor, clear the screen, set the window title or forge a line.
#pragma once
#include <string>
#include <string_view>

namespace gpuvet {

// Every control character (C0 but tab and, when `keep_newlines`, \n; DEL; C1), the bidirectional
// overrides and isolates, and every byte that is not part of valid UTF-8 become visible escapes
// (`\x1b`, `\u009b`, `\u202e`, `\xff`); everything else is kept as it is.
std::string visible_text(std::string_view s, bool keep_newlines = true);

// For a whole text bound for a terminal: as visible_text with newlines kept, except that the
// colour and weight sequences gpuvet's own styles write (ESC [ <attributes> m, with only the
// attributes of gpuvet's palette: reset, bold, dim, five foreground colours) pass unchanged.
// A sequence that conceals, blinks, reverses or sets any other attribute is made visible. External
// strings are passed through visible_text before they join such a text (the report readers do it
// for every field; the run summary for the command, tag and note; the driver bindings for the
// names and error texts the libraries return), so they carry no escape at all.
std::string terminal_safe(std::string_view rendered);

// One Markdown inline text (a table cell, a list item): visible_text on one line (line breaks
// become spaces), `|` escaped, a `<` that could open a tag and the `](` of a link escaped, so a
// value can neither end its cell or row, nor open raw HTML, nor make a link; "a -> b" and
// "warn > 79 [source]" read as they are.
std::string markdown_text(std::string_view s);

// Every string value of a parsed document, at any depth, through visible_text:
// the report readers apply it, so what a crafted file holds is inert in every printer.
// gpuvet writes no line break into a report's strings (details are arrays of lines), so by default
// a break is made visible too: a hostname cannot forge a line of the scorecard.
template <class JsonT>
void make_strings_visible(JsonT& j, bool keep_newlines = false) {
    if (j.is_string()) {
        const auto& s = j.template get_ref<const std::string&>();
        std::string v = visible_text(s, keep_newlines);
        if (v != s) j = v;
    } else if (j.is_structured()) {
        for (auto& child : j) make_strings_visible(child, keep_newlines);
    }
}

}  // namespace gpuvet
