#include "plan/quant_config.hpp"

#include <fmt/format.h>
#include <stdexcept>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/strings.hpp"

namespace gpuvet {

namespace {

constexpr const char* kAdvice =
    "pass the model's config.json as published in its repository, or give a bare count with --params";
constexpr const char* kRefuseAdvice =
    "plan the unquantized model (drop quantization_config) and pick --dtype, or give --params with the "
    "checkpoint's size";

// Module lists no real config comes near; they bound the matching work.
constexpr std::size_t kMaxEntries = 8192, kMaxNameChars = 512;

constexpr NumberRule kGroupRule{
    .min = -1, .max = double(1 << 20), .whole = true, .what = "a group size (-1: per column)", .example = "128"};
constexpr NumberRule kBlockRule{.min = 1, .max = 65536, .whole = true, .what = "a block side", .example = "128"};

// A name from the file, as an error can show it: printable ASCII, at most 64 characters.
std::string clip(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (out.size() >= 64) return out + "...";
        out += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    return out;
}

[[noreturn]] void bad(const std::string& origin, const std::string& what) {
    throw input_error(origin + ": quantization_config " + what, kAdvice);
}

// "a 4-bit", "an 8-bit": how a width reads before a noun.
std::string n_bit(double bits) { return fmt::format("{} {}-bit", bits == 8 ? "an" : "a", bits); }

// Whole-number field: nullopt when absent, an error when mistyped or out of range.
std::optional<std::int64_t> whole(const FieldSource& q, const std::string& origin, std::string_view k,
                                  const NumberRule& r) {
    if (q.has && !q.has(k)) return std::nullopt;
    auto v = q.number(k);
    if (!v) {
        if (!q.has) return std::nullopt;
        bad(origin, "field " + std::string(k) + " must be a number; give " + std::string(r.what) + " " +
                        describe_range(r) + ", e.g. " + std::string(k) + " = " + std::string(r.example));
    }
    NumberRule w = r;
    w.whole = true;
    return std::int64_t(check_number_field(origin + ": quantization_config", k, *v, w, kAdvice));
}

bool flag(const FieldSource& q, const std::string& origin, std::string_view k, bool dflt) {
    if (!q.has || !q.has(k)) return dflt;
    auto b = q.boolean(k);
    if (!b) bad(origin, "field " + std::string(k) + " must be true or false");
    return *b;
}

std::optional<std::string> word(const FieldSource& q, const std::string& origin, std::string_view k) {
    if (!q.has || !q.has(k)) return std::nullopt;
    auto t = q.text(k);
    if (!t) bad(origin, "field " + std::string(k) + " must be a string");
    return to_lower(*t);
}

// GPTQ, AWQ and compressed-tensors pack weights in these widths.
double width(const FieldSource& q, const std::string& origin, std::initializer_list<std::string_view> names,
             double dflt) {
    for (auto n : names) {
        if (q.has && !q.has(n)) continue;
        auto v = q.number(n);
        if (!v && !q.has) continue;
        for (double ok : {2, 3, 4, 5, 6, 8, 16})
            if (v && *v == ok) return ok;
        bad(origin, "field " + std::string(n) + " = " + (v ? format_number(*v) : std::string("(not a number)")) +
                        ": not a supported width; give one of 2, 3, 4, 5, 6, 8, 16, e.g. bits = 4");
    }
    return dflt;
}

std::optional<std::vector<std::string>> names_field(const FieldSource& q, const std::string& origin,
                                                    const std::string& k) {
    if (!q.has || !q.has(k)) return std::nullopt;
    auto v = q.texts ? q.texts(k) : std::nullopt;
    if (!v) bad(origin, "field " + k + " must be a list of module names, e.g. " + k + " = [\"lm_head\"]");
    if (v->size() > kMaxEntries) bad(origin, fmt::format("field {} has more than {} entries", k, kMaxEntries));
    for (auto& s : *v)
        if (s.size() > kMaxNameChars)
            bad(origin, fmt::format("field {} has an entry longer than {} characters", k, kMaxNameChars));
    return v;
}

// Compiles what `how` reads as a regex; a pattern outside the supported subset is named.
ModulePatterns patterns(std::vector<std::string> text, NameMatch how, const std::string& origin,
                        const std::string& field) {
    ModulePatterns p;
    p.how = how;
    for (auto& t : text) {
        std::optional<NamePattern> re;
        std::string_view src = t;
        bool regex = false;
        if (how == NameMatch::ExactOrRegex && t.rfind("re:", 0) == 0) {
            src = std::string_view(t).substr(3);
            regex = true;
        } else if (how == NameMatch::PrefixOrSuffix || how == NameMatch::Regex) {
            regex = !is_literal_name(t);
        }
        if (how == NameMatch::ExactOrRegex && !regex && t == "Linear") {
            p.names_class = true;  // compressed-tensors' class target: every linear layer
            continue;
        }
        if (regex) try {
                re = NamePattern::compile(src);
            } catch (const std::invalid_argument& e) {
                bad(origin, field + " entry '" + clip(t) + "' is not a pattern the planner can match: " + e.what());
            }
        p.text.push_back(t);
        p.re.push_back(std::move(re));
    }
    return p;
}

void skip_list(Quantization& q, const FieldSource& c, const std::string& origin,
               std::initializer_list<const char*> fields, NameMatch how) {
    std::vector<std::string> all, used;
    for (const char* k : fields)
        if (auto v = names_field(c, origin, k)) {
            all.insert(all.end(), v->begin(), v->end());
            used.push_back(k);
        }
    q.not_converted = patterns(std::move(all), how, origin, used.empty() ? fields.begin()[0] : used.front());
    q.not_converted_field = fmt::format("{}", fmt::join(used, ", "));  // empty: the config names none
}

// bitsandbytes: NF4/FP4 store 4 bits and one absmax per 64 weights (fp32, or 8-bit with double
// quantization plus an fp32 per 256 blocks: QLoRA, arXiv:2305.14314 §3); LLM.int8() stores int8
// and an fp32 statistic per output row (arXiv:2208.07339).
void bitsandbytes(Quantization& q, const FieldSource& c, const std::string& origin) {
    WeightFormat& f = q.format;
    if (flag(c, origin, "load_in_4bit", false)) {
        std::string type = word(c, origin, "bnb_4bit_quant_type").value_or("fp4");
        if (type != "nf4" && type != "fp4") bad(origin, "bnb_4bit_quant_type '" + clip(type) + "': give nf4 or fp4");
        const bool dq = flag(c, origin, "bnb_4bit_use_double_quant", false);
        f = WeightFormat::of(type, 4);
        f.group = 64;
        f.group_bits = dq ? 8.0 + 32.0 / 256 : 32.0;
        f.scales = dq ? "an 8-bit absmax per 64 weights and an fp32 scale per 256 absmax (double quantization)"
                      : "an fp32 absmax per 64 weights";
    } else if (flag(c, origin, "load_in_8bit", false)) {
        f = WeightFormat::of("int8", 8);
        f.row_bits = 32;
        f.scales = "an fp32 statistic per output row (LLM.int8())";
    } else {
        bad(origin, "(bitsandbytes) sets neither load_in_4bit nor load_in_8bit");
    }
    // transformers' BitsAndBytesConfig writes the modules it keeps as llm_int8_skip_modules.
    skip_list(q, c, origin, {"llm_int8_skip_modules", "modules_to_not_convert"}, NameMatch::PrefixOrSuffix);
}

// One GPTQ format: bits, an fp16 scale and a packed zero point per group (per output row with
// group_size -1), and an int32 group index (g_idx) per input column.
WeightFormat gptq_format(double bits, std::int64_t group) {
    WeightFormat f = WeightFormat::of(fmt::format("int{}", bits), bits);
    if (group > 0) {
        f.group = group;
        f.group_bits = 16 + bits;
    } else {
        f.row_bits = 16 + bits;
    }
    f.column_bits = 32;
    const std::string per = group > 0 ? fmt::format("{} weights", group) : std::string("output row");
    f.scales = fmt::format("an fp16 scale and {} zero point per {}, an int32 g_idx per input column", n_bit(bits), per);
    return f;
}

// GPTQModel's dynamic: "-:regex" leaves matching modules unconverted, "+:regex" (or a bare regex)
// overrides bits and group_size; vLLM applies the first key that re.match-es the module's name.
void gptq_dynamic(Quantization& q, const FieldSource& c, const std::string& origin, double bits, std::int64_t group) {
    if (!c.has || !c.has("dynamic")) return;
    auto d = c.object ? c.object("dynamic") : std::nullopt;
    if (!d) bad(origin, "field dynamic must be an object of module regexes, e.g. dynamic = {\"-:lm_head\": {}}");
    auto keys = d->keys ? d->keys() : std::vector<std::string>{};
    if (keys.size() > kMaxEntries) bad(origin, fmt::format("field dynamic has more than {} entries", kMaxEntries));
    for (auto& k : keys) {
        const bool skip = k.rfind("-:", 0) == 0;
        std::string re = (skip || k.rfind("+:", 0) == 0) ? k.substr(2) : k;
        FormatRule r;
        r.modules = patterns({re}, NameMatch::Regex, origin, "dynamic");
        r.from = "dynamic '" + clip(k) + "'";
        if (!skip) {
            auto o = d->object ? d->object(k) : std::nullopt;
            if (!o) bad(origin, "dynamic '" + clip(k) + "' must map to an object, e.g. {\"bits\": 8}");
            r.format = gptq_format(width(*o, origin, {"bits"}, bits),
                                   whole(*o, origin, "group_size", kGroupRule).value_or(group));
        }
        q.rules.push_back(std::move(r));
    }
}

void gptq(Quantization& q, const FieldSource& c, const std::string& origin) {
    const double bits = width(c, origin, {"bits"}, 4);
    const std::int64_t group = whole(c, origin, "group_size", kGroupRule).value_or(128);
    q.format = gptq_format(bits, group);
    q.lm_head = flag(c, origin, "lm_head", false);
    if (auto v = names_field(c, origin, "modules_in_block_to_quantize")) q.block_modules = *v;
    gptq_dynamic(q, c, origin, bits, group);
}

// AutoAWQ: bits, an fp16 scale per group and a packed zero point when zero_point is true.
void awq(Quantization& q, const FieldSource& c, const std::string& origin) {
    const double bits = width(c, origin, {"bits", "w_bit"}, 4);
    std::int64_t group = 128;
    for (const char* k : {"group_size", "q_group_size"})
        if (auto g = whole(c, origin, k, kGroupRule)) {
            group = *g;
            break;
        }
    const bool zero = flag(c, origin, "zero_point", true);
    q.format = WeightFormat::of(fmt::format("int{}", bits), bits);
    const double per = 16 + (zero ? bits : 0);
    if (group > 0) {
        q.format.group = group;
        q.format.group_bits = per;
    } else {
        q.format.row_bits = per;
    }
    q.format.scales = fmt::format("an fp16 scale{} per {}", zero ? " and " + n_bit(bits) + " zero point" : "",
                                  group > 0 ? fmt::format("{} weights", group) : std::string("output row"));
    // AutoAWQ and vLLM skip a module when an entry is part of its name.
    skip_list(q, c, origin, {"modules_to_not_convert"}, NameMatch::Substring);
}

// fp8 (DeepSeek-V3, Qwen3-FP8): e4m3 with an fp32 scale per weight_block_size block, else per tensor.
void fp8(Quantization& q, const FieldSource& c, const std::string& origin) {
    q.format = WeightFormat::of("fp8", 8);
    if (c.has && c.has("weight_block_size")) {
        auto block = c.numbers ? c.numbers("weight_block_size") : std::nullopt;
        if (!block || block->size() != 2 || (*block)[0] < 1 || (*block)[1] < 1 || (*block)[0] > 65536 ||
            (*block)[1] > 65536 || (*block)[0] != double(std::int64_t((*block)[0])) ||
            (*block)[1] != double(std::int64_t((*block)[1])))
            bad(origin,
                "field weight_block_size must be two block sides from 1 to 65536, e.g. weight_block_size = "
                "[128, 128]");
        q.format.block_rows = std::int64_t((*block)[0]);
        q.format.block_cols = std::int64_t((*block)[1]);
        q.format.block_bits = 32;
        q.format.scales = fmt::format("an fp32 scale per {} × {} block", q.format.block_rows, q.format.block_cols);
    } else {
        q.format.tensor_bits = 32;
        q.format.scales = "an fp32 scale per tensor";
    }
    // transformers names the list modules_to_not_convert, vLLM's fp8 configs ignored_layers.
    skip_list(q, c, origin, {"modules_to_not_convert", "ignored_layers"}, NameMatch::PrefixOrSuffix);
}

// fbgemm_fp8 (Meta's Llama 3.1 FP8): e4m3 with an fp32 scale per output row.
void fbgemm_fp8(Quantization& q, const FieldSource& c, const std::string& origin) {
    q.format = WeightFormat::of("fp8", 8);
    q.format.row_bits = 32;
    q.format.scales = "an fp32 scale per output row";
    skip_list(q, c, origin, {"modules_to_not_convert"}, NameMatch::PrefixOrSuffix);
}

}  // namespace

// compressed-tensors (llm-compressor) -----------------------------------------------------------

namespace {

constexpr const char* kCtFormats =
    "pack-quantized, float-quantized, int-quantized, naive-quantized, nvfp4-pack-quantized";

// One config_groups entry's weights scheme. Scales are stored in the checkpoint's 16-bit dtype;
// an asymmetric scheme adds a num_bits zero point beside each scale.
WeightFormat ct_weights(const FieldSource& w, const std::string& origin, const std::string& group,
                        const std::string& format) {
    const double bits = width(w, origin, {"num_bits"}, 8);
    const std::string type = word(w, origin, "type").value_or("int");
    if (type != "int" && type != "float") bad(origin, group + ".weights.type '" + clip(type) + "': give int or float");
    const std::string strategy = word(w, origin, "strategy").value_or("tensor");
    const double zero = flag(w, origin, "symmetric", true) ? 0 : bits;
    WeightFormat f = WeightFormat::of(type == "float" ? fmt::format("fp{}", bits) : fmt::format("int{}", bits), bits);
    // int-quantized and naive-quantized keep each value in an 8-bit container.
    if ((format == "int-quantized" || format == "naive-quantized") && bits < 8) f.weight_bits = 8;
    if (strategy == "tensor") {
        f.tensor_bits = 16 + zero;
        f.scales = "a 16-bit scale per tensor";
    } else if (strategy == "channel") {
        f.row_bits = 16 + zero;
        f.scales = "a 16-bit scale per output row";
    } else if (strategy == "group" || strategy == "tensor_group") {
        f.group = whole(w, origin, "group_size", kGroupRule).value_or(strategy == "group" ? 128 : 16);
        if (f.group < 1) bad(origin, group + ".weights.group_size must be at least 1 for strategy " + strategy);
        // tensor_group (NVFP4): an fp8 scale per group and an fp32 global scale per tensor.
        f.group_bits = (strategy == "group" ? 16 : 8) + zero;
        if (strategy == "tensor_group") f.tensor_bits = 32;
        f.scales = fmt::format("a {} scale per {} weights{}", strategy == "group" ? "16-bit" : "fp8", f.group,
                               strategy == "group" ? "" : " and an fp32 scale per tensor");
    } else if (strategy == "block") {
        auto b = w.numbers ? w.numbers("block_structure") : std::nullopt;
        if (!b || b->size() != 2)
            bad(origin, group + ".weights.block_structure must be two block sides, e.g. [128, 128]");
        f.block_rows = std::int64_t(check_number_field(origin, "block_structure", (*b)[0], kBlockRule, kAdvice));
        f.block_cols = std::int64_t(check_number_field(origin, "block_structure", (*b)[1], kBlockRule, kAdvice));
        f.block_bits = 16 + zero;
        f.scales = fmt::format("a 16-bit scale per {} × {} block", f.block_rows, f.block_cols);
    } else {
        bad(origin, group + ".weights.strategy '" + clip(strategy) +
                        "': give tensor, channel, group, block or "
                        "tensor_group");
    }
    if (zero > 0) f.scales += " with " + n_bit(bits) + " zero point";
    return f;
}

void ct_kv_cache(Quantization& q, const FieldSource& c, const std::string& origin) {
    if (!c.has || !c.has("kv_cache_scheme")) return;
    auto kv = c.object ? c.object("kv_cache_scheme") : std::nullopt;
    if (!kv) bad(origin, "field kv_cache_scheme must be an object such as {\"num_bits\": 8, \"type\": \"float\"}");
    const double bits = width(*kv, origin, {"num_bits"}, 8);
    const std::string type = word(*kv, origin, "type").value_or("float");
    if (bits != 8 || (type != "float" && type != "int"))
        bad(origin, fmt::format("kv_cache_scheme of {} {} bits: the planner models 8-bit KV caches (float or int)",
                                clip(type), bits));
    q.kv_cache_dtype = type == "float" ? "fp8" : "int8";
}

void compressed_tensors(Quantization& q, const FieldSource& c, const std::string& origin) {
    const std::string format = word(c, origin, "format").value_or("pack-quantized");
    auto known = [](const std::string& f) {
        return f == "pack-quantized" || f == "float-quantized" || f == "int-quantized" || f == "naive-quantized" ||
               f == "nvfp4-pack-quantized";
    };
    if (!known(format))
        bad(origin,
            "(compressed-tensors) format '" + clip(format) + "' is not one the planner models; known: " + kCtFormats);
    auto groups = c.object ? c.object("config_groups") : std::nullopt;
    if (!groups) bad(origin, "(compressed-tensors) has no config_groups: nothing says how the weights are stored");
    auto names = groups->keys ? groups->keys() : std::vector<std::string>{};
    if (names.size() > kMaxEntries) bad(origin, "config_groups has too many groups");
    for (auto& name : names) {
        const std::string where = "config_groups." + clip(name);
        auto g = groups->object ? groups->object(name) : std::nullopt;
        if (!g) bad(origin, where + " must be an object with targets and weights");
        auto targets = names_field(*g, origin, "targets");
        if (!targets || targets->empty()) bad(origin, where + " names no targets");
        FormatRule r;
        r.modules = patterns(*targets, NameMatch::ExactOrRegex, origin, where + ".targets");
        r.from = where;
        const std::string gformat = word(*g, origin, "format").value_or(format);
        if (!known(gformat)) bad(origin, where + " format '" + clip(gformat) + "' is not one the planner models");
        if (g->has && g->has("weights")) {
            auto w = g->object ? g->object("weights") : std::nullopt;
            if (!w) bad(origin, where + ".weights must be an object with num_bits, type and strategy");
            r.format = ct_weights(*w, origin, where, gformat);
        }
        q.rules.push_back(std::move(r));
    }
    if (q.rules.empty()) bad(origin, "(compressed-tensors) config_groups is empty");
    q.only_rules = true;
    q.format = q.rules.front().format.value_or(WeightFormat{});
    skip_list(q, c, origin, {"ignore"}, NameMatch::ExactOrRegex);
    ct_kv_cache(q, c, origin);
}

// torch_dtype (dtype in newer transformers): what the unconverted modules keep.
void checkpoint_dtype(Quantization& q, const FieldSource& f, const std::string& origin) {
    std::optional<std::string> d;
    for (const char* k : {"torch_dtype", "dtype"})
        if (f.has && f.has(k)) {
            auto t = f.text(k);
            if (!t) throw input_error(origin + ": field " + k + " must be a string such as \"bfloat16\"", kAdvice);
            d = to_lower(*t);
            break;
        }
    if (!d || *d == "auto") return;
    if (*d == "bfloat16" || *d == "bf16") q.dtype = "bf16";
    else if (*d == "float16" || *d == "fp16" || *d == "half") q.dtype = "fp16";
    else if (*d == "float32" || *d == "fp32" || *d == "float") {
        q.dtype = "fp32";
        q.dtype_bytes = 4;
    } else {
        throw input_error(origin + ": torch_dtype '" + clip(*d) + "' is not bfloat16, float16 or float32", kAdvice);
    }
    q.dtype_stated = true;
}

}  // namespace

std::optional<Quantization> read_quantization_config(const FieldSource& f, const std::string& origin) {
    if (!f.object) return std::nullopt;
    auto c = f.object("quantization_config");
    if (!c) {
        if (f.has && f.has("quantization_config"))
            throw input_error(origin + ": quantization_config must be an object", kAdvice);
        return std::nullopt;
    }
    Quantization q;
    std::string method = word(*c, origin, "quant_method").value_or("");
    // transformers' BitsAndBytesConfig is the one config that may leave its method implicit.
    if (method.empty() && ((c->has && (c->has("load_in_4bit") || c->has("load_in_8bit"))) ||
                           c->boolean("load_in_4bit") || c->boolean("load_in_8bit")))
        method = "bitsandbytes";
    q.method = method;
    if (method == "bitsandbytes") bitsandbytes(q, *c, origin);
    else if (method == "gptq") gptq(q, *c, origin);
    else if (method == "awq") awq(q, *c, origin);
    else if (method == "fp8") fp8(q, *c, origin);
    else if (method == "fbgemm_fp8") fbgemm_fp8(q, *c, origin);
    else if (method == "compressed-tensors") compressed_tensors(q, *c, origin);
    else
        throw input_error(
            origin + ": quantization_config " +
                (method.empty() ? std::string("has no quant_method")
                                : "quant_method '" + clip(method) + "' is not a method the planner models") +
                "; known: " + kQuantMethods,
            kRefuseAdvice);
    checkpoint_dtype(q, f, origin);
    return q;
}

}  // namespace gpuvet
