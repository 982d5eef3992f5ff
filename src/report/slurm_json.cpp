#include "report/slurm_json.hpp"

namespace gpuvet {

namespace {

nlohmann::ordered_json opt(const std::optional<std::string>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
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

}  // namespace gpuvet
