#include "report/spec_json.hpp"

#include <cstdio>

#include "specs/spec_fields.hpp"

namespace gpuvet {

Json to_json(const GpuSpec& s) {
    Json j;
    j["key"] = s.key;
    j["name"] = s.name;
    j["vendor"] = s.vendor;
    j["architecture"] = s.architecture;
    j["compute_capability"] = s.compute_capability;
    if (s.amd()) {
        j["gfx_target"] = s.gfx_target;
        j["devices_per_board"] = s.devices_per_board;
    }
    j["pci_vendor_id"] = s.pci_vendor_id();
    j["form_factor"] = s.form_factor;
    j["memory_type"] = s.memory_type;
    for (auto& f : numeric_spec_fields()) {
        auto v = f.get(s);
        j[f.key] = v ? Json(*v) : Json(nullptr);
    }
    j["driver_memory_ecc_on_mib"] = s.driver_memory_ecc_on_mib ? Json(*s.driver_memory_ecc_on_mib) : Json(nullptr);
    j["driver_memory_ecc_off_mib"] = s.driver_memory_ecc_off_mib ? Json(*s.driver_memory_ecc_off_mib) : Json(nullptr);
    j["driver_memory_source"] = s.driver_memory_source;
    j["ecc"] = s.ecc;
    j["mig_instances_max"] = s.mig_instances_max;
    Json ids = Json::array();
    for (auto id : s.pci_device_ids) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "0x%04x", id);
        ids.push_back(buf);
    }
    j["pci_device_ids"] = ids;
    j["driver_names"] = s.driver_names;
    j["aliases"] = s.aliases;
    j["source"] = s.source;
    j["notes"] = s.notes;
    return j;
}

}  // namespace gpuvet
