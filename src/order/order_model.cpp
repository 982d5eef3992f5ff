#include "order/order.hpp"

#include "specs/spec_db.hpp"

namespace gpuvet {

void resolve_gpu_model(Order& o, const std::string& model, const SpecDb& specs) {
    SpecMatch m = specs.match(model);  // throws with the closest names
    o.gpu_model = model;
    o.gpu_match_how = m.how;
    o.gpu_skus.clear();
    // A short name ("H100") fits several SKUs: any of them is what was ordered.
    o.gpu_skus.push_back(m.spec->key);
    for (auto* alt : m.alternatives) o.gpu_skus.push_back(alt->key);
}

}  // namespace gpuvet
