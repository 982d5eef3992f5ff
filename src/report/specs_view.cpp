#include "report/specs_view.hpp"

#include <cstdio>
#include <algorithm>
#include <sstream>

#include "core/strings.hpp"
#include "specs/spec_fields.hpp"

namespace gpuvet {

namespace {

std::string cell(const std::optional<double>& v, int sig = 4) { return v ? format_number(*v, sig) : "—"; }

std::string rpad(std::string s, std::size_t n) {
    // Pads by visible characters (UTF-8 aware enough for "—" and "×").
    std::size_t visible = 0;
    for (unsigned char c : s) visible += (c & 0xC0) != 0x80;
    if (visible < n) s.append(n - visible, ' ');
    return s;
}

std::string lpad(std::string s, std::size_t n) {
    std::size_t visible = 0;
    for (unsigned char c : s) visible += (c & 0xC0) != 0x80;
    if (visible < n) s.insert(0, n - visible, ' ');
    return s;
}

std::string rtrim(std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

}  // namespace

std::string render_specs_list(const SpecDb& db, const Style& st) {
    std::size_t name_w = 4, arch_w = 4;
    for (auto& s : db.all()) {
        name_w = std::max(name_w, s.name.size() + 2);
        arch_w = std::max(arch_w, s.architecture.size() + 2);
    }
    std::ostringstream o;
    o << st.dim(
             "Dense datasheet figures: GB/s and TFLOPS decimal, memory in GiB. "
             "'gpuvet specs show NAME' for everything.")
      << "\n";
    o << st.bold(rpad("SKU", name_w) + rpad("ARCH", arch_w) + rpad("MEMORY", 15) + lpad("GB/s", 6) + lpad("FP32", 7) +
                 lpad("TF32", 7) + lpad("BF16", 7) + lpad("FP8", 7) + lpad("TDP W", 7) + "  NVLINK")
      << "\n";
    for (auto& s : db.all()) {
        std::string mem = format_number(s.memory_size_gib, 4) + " GiB " + s.memory_type;
        std::string nvl = s.nvlink_bandwidth_gbps ? format_number(*s.nvlink_bandwidth_gbps, 4) + " GB/s"
                          : s.xgmi_links && s.xgmi_link_bandwidth_gbps
                              ? format_number(*s.xgmi_links * *s.xgmi_link_bandwidth_gbps, 4) + " GB/s xGMI"
                              : "—";
        o << rpad(s.name, name_w) << rpad(s.architecture, arch_w) << rpad(mem, 15)
          << lpad(cell(s.memory_bandwidth_gbps), 6) << lpad(cell(s.fp32_tflops), 7)
          << lpad(cell(s.tf32_tensor_tflops), 7) << lpad(cell(s.bf16_tensor_tflops), 7)
          << lpad(cell(s.fp8_tensor_tflops), 7) << lpad(cell(s.tdp_w), 7) << "  " << nvl << "\n";
    }
    o << st.dim(std::to_string(db.all().size()) +
                " SKUs. TF32/BF16/FP8: tensor-core (AMD: matrix-core) TFLOPS without sparsity. NVLINK: total per "
                "GPU, both directions (AMD: xGMI links x peak per link).")
      << "\n";
    return o.str();
}

std::string render_spec_show(const GpuSpec& s, const Style& st) {
    std::ostringstream o;
    o << st.bold(s.name) << "  (" << s.key << ")\n";
    auto row = [&](const std::string& label, const std::string& value) {
        o << "  " << rpad(label, 24) << value << "\n";
    };
    if (s.amd()) row("Vendor", s.vendor);
    row("Architecture",
        s.architecture + (s.amd() ? ", gfx target " + s.gfx_target : ", compute capability " + s.compute_capability));
    if (s.devices_per_board > 1)
        row("GPUs per board", std::to_string(s.devices_per_board) + " (the driver lists each die as a GPU)");
    row("Form factor", s.form_factor.empty() ? "—" : s.form_factor);
    row("Memory type", s.memory_type);
    for (auto& f : numeric_spec_fields()) {
        auto v = f.get(s);
        row(f.label,
            v ? format_number(*v, 5) + (*f.unit ? std::string(" ") + f.unit : "") : "— (not on the datasheet)");
    }
    row("ECC", s.ecc ? "yes" : "no");
    row("MIG", s.mig_instances_max ? "up to " + std::to_string(s.mig_instances_max) + " instances" : "no");
    std::string ids;
    for (auto id : s.pci_device_ids) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "0x%04x", id);
        ids += (ids.empty() ? "" : ", ") + std::string(buf);
    }
    row("PCI device ids", ids.empty() ? "—" : ids);
    std::string names;
    for (auto& n : s.driver_names) names += (names.empty() ? "" : "; ") + n;
    row("Driver reports", names.empty() ? "—" : names);
    o << "  " << rpad("Source", 24) << s.source << "\n";
    if (!s.notes.empty()) o << "  " << rpad("Notes", 24) << s.notes << "\n";
    return o.str();
}

std::string render_specs_compare(const std::vector<const GpuSpec*>& specs, const Style& st) {
    // Rows first, so the columns can be as wide as their widest cell.
    struct Row {
        std::string label;
        std::vector<std::string> cells;
    };
    std::vector<Row> rows;
    auto text_row = [&](const char* label, auto get) {
        Row r{label, {}};
        for (auto* s : specs) r.cells.push_back(get(*s));
        rows.push_back(r);
    };
    // Across vendors: each SKU's vendor, and the AMD ones' gfx targets.
    if (std::any_of(specs.begin(), specs.end(), [](const GpuSpec* s) { return s->amd(); }))
        text_row("Vendor", [](const GpuSpec& s) { return s.vendor; });
    text_row("Architecture",
             [](const GpuSpec& s) { return s.architecture + (s.amd() ? " (" + s.gfx_target + ")" : std::string()); });
    text_row("Memory type", [](const GpuSpec& s) { return s.memory_type; });
    text_row("Form factor", [](const GpuSpec& s) { return s.form_factor; });
    for (auto& f : numeric_spec_fields()) {
        if (std::string(f.key) == "pcie_lanes" || std::string(f.key) == "memory_bus_width_bits") continue;
        bool any = false;
        for (auto* s : specs) any = any || f.get(*s).has_value();
        if (!any) continue;
        Row r{std::string(f.label) + (*f.unit ? std::string(" ") + f.unit : ""), {}};
        auto base = f.get(*specs.front());
        for (std::size_t i = 0; i < specs.size(); ++i) {
            auto v = f.get(*specs[i]);
            std::string c = v ? format_number(*v, 5) : "—";
            // A ratio of generations means nothing; of throughputs and sizes it is the point.
            bool ratio = std::string(f.key).find("generation") == std::string::npos;
            if (ratio && i > 0 && v && base && *base > 0) c += " (×" + format_number(*v / *base, 3) + ")";
            r.cells.push_back(c);
        }
        rows.push_back(r);
    }
    text_row("ECC", [](const GpuSpec& s) { return std::string(s.ecc ? "yes" : "no"); });
    text_row("MIG", [](const GpuSpec& s) {
        return s.mig_instances_max ? std::to_string(s.mig_instances_max) + " instances" : std::string("no");
    });

    std::size_t label_w = 0, col_w = 12;
    for (auto& r : rows) {
        label_w = std::max(label_w, r.label.size() + 2);
        for (auto& c : r.cells) col_w = std::max(col_w, c.size() + 2);
    }
    std::ostringstream o;
    // Names wrap inside their column instead of pushing the table wider.
    std::vector<std::vector<std::string>> head;
    std::size_t head_lines = 1;
    for (auto* s : specs) {
        std::vector<std::string> lines{""};
        std::istringstream words(s->name);
        std::string w;
        while (words >> w) {
            if (!lines.back().empty() && lines.back().size() + 1 + w.size() > col_w - 2) lines.push_back("");
            lines.back() += (lines.back().empty() ? "" : " ") + w;
        }
        head_lines = std::max(head_lines, lines.size());
        head.push_back(lines);
    }
    for (std::size_t l = 0; l < head_lines; ++l) {
        std::string line = rpad("", label_w);
        for (auto& h : head) line += rpad(l < h.size() ? h[l] : "", col_w);
        o << st.bold(rtrim(line)) << "\n";
    }
    for (auto& r : rows) {
        std::string line = rpad(r.label, label_w);
        for (auto& c : r.cells) line += rpad(c, col_w);
        o << rtrim(line) << "\n";
    }
    o << st.dim("Ratios are to " + specs.front()->name + ". Dense datasheet figures, no sparsity.") << "\n";
    return o.str();
}

std::string describe_match(const std::string& query, const SpecMatch& m) {
    std::string s = "'" + query + "' → " + m.spec->name;
    if (!m.alternatives.empty()) {
        s += " (the preferred of " + std::to_string(m.alternatives.size() + 1) + "; also: ";
        for (std::size_t i = 0; i < m.alternatives.size(); ++i) s += (i ? ", " : "") + m.alternatives[i]->name;
        s += " — name the form factor or memory to choose another)";
    }
    return s;
}

}  // namespace gpuvet
