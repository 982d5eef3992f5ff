#include "report/slurm_json.hpp"

namespace gpuvet {

namespace {

nlohmann::ordered_json opt(const std::optional<std::string>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

std::optional<std::string> opt_str(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

}  // namespace

nlohmann::ordered_json slurm_to_json(const SlurmContext& s) {
    return {{"job_id", s.job_id},
            {"step_id", opt(s.step_id)},
            {"node", opt(s.node)},
            {"procid", opt(s.procid)},
            {"step_gpus", opt(s.step_gpus)},
            {"job_gpus", opt(s.job_gpus)},
            {"cuda_visible_devices", opt(s.cuda_visible_devices)},
            {"gpus_on_node", opt(s.gpus_on_node)}};
}

std::string with_slurm_context(const std::string& document, const std::optional<SlurmContext>& s) {
    auto j = nlohmann::ordered_json::parse(document);
    j["slurm"] = s ? slurm_to_json(*s) : nlohmann::ordered_json(nullptr);
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::optional<SlurmContext> slurm_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return std::nullopt;
    auto job = opt_str(j, "job_id");
    if (!job) return std::nullopt;
    SlurmContext s;
    s.job_id = *job;
    s.step_id = opt_str(j, "step_id");
    s.node = opt_str(j, "node");
    s.procid = opt_str(j, "procid");
    s.step_gpus = opt_str(j, "step_gpus");
    s.job_gpus = opt_str(j, "job_gpus");
    s.cuda_visible_devices = opt_str(j, "cuda_visible_devices");
    s.gpus_on_node = opt_str(j, "gpus_on_node");
    return s;
}

}  // namespace gpuvet
