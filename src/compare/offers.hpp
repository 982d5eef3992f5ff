// gpuvet compare: offers (check reports of different servers) side by side: measured figures and
// their share of spec, value per money, the winner with its reasons, offers below their class.
// Pure: reports and prices in, a comparison out; printers in offers_view.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

struct OfferFigure {
    std::string id, label, unit;
    std::optional<double> per_gpu;        // median over the GPUs (or the box's value)
    std::optional<double> share_of_spec;  // median of value / spec
    std::optional<double> healthy_share;  // what healthy hardware of the class reaches at least
    std::optional<double> per_money;      // per_gpu / price per card-hour
    bool below_class = false;             // share_of_spec under healthy_share
    std::optional<int> worst_gpu;         // the slowest GPU, when more than 5% under the median
    std::optional<double> worst;
    std::string source;
};

struct Offer {
    std::string name;  // the file's stem, or the host name
    std::string path;
    std::string gpu_model;
    int gpu_count = 0;
    RunVerdict verdict = RunVerdict::CouldNotRun;
    std::optional<double> price_per_card_hour;
    std::vector<OfferFigure> figures;  // in offer_metrics() order, measured ones only
    std::vector<std::string> failed;   // "gpu.pcie_link GPU 3: link trained down to x8 ..."
    const OfferFigure* figure(const std::string& id) const;
};

struct OfferComparison {
    std::string currency;  // empty: no prices
    std::vector<Offer> offers;
    std::optional<std::size_t> winner;  // index into offers
    std::string decided_by;             // "Sustained burn throughput per USD/h"
    std::vector<std::string> reasons;   // why the winner won, with the numbers
    std::vector<std::string> notes;     // offers below class, figures not comparable
};

struct OfferInput {
    std::string name, path;
    Report report;
};

// `prices`: SKU key -> price per card-hour; empty when no price file was given. Throws an Input
// error when prices are given and an offer's GPU model has none.
OfferComparison compare_offers(std::vector<OfferInput> inputs, const std::map<std::string, double>& prices,
                               const std::string& currency);

}  // namespace gpuvet
